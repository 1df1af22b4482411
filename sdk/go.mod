module github.com/gregorbroker/gregor/sdk

go 1.24
