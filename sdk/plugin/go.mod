module github.com/gregorbroker/gregor/sdk/plugin

go 1.24

require (
	github.com/gregorbroker/gregor/sdk v0.0.0-00010101000000-000000000000
	github.com/hashicorp/go-plugin v1.8.0
	google.golang.org/grpc v1.75.1
	google.golang.org/protobuf v1.36.8
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	github.com/oklog/run v1.1.0 // indirect
	golang.org/x/net v0.41.0 // indirect
	golang.org/x/sys v0.33.0 // indirect
	golang.org/x/text v0.26.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250707201910-8d1bb00bc6a7 // indirect
)

replace github.com/gregorbroker/gregor/sdk => ../
