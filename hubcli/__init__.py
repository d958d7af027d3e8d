"""`hub-cli`: the server, the client, the stdio bridge and the operations tool."""
