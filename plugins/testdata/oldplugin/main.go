// Command oldplugin stands for a plugin built for another protocol version:
// its handshake names version 99, which the host must refuse.
package main

import (
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/gregorbroker/gregor/sdk/plugin"
)

func main() {
	hs := plugin.Handshake
	hs.ProtocolVersion = 99
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.ClientPlugins(),
		GRPCServer:      goplugin.DefaultGRPCServer,
	})
}
