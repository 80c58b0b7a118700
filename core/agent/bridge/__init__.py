"""The runtime's side of the Bridge protocol (docs/bridge-protocol.md): the port the runtime
needs (`port`), its HTTP client with resumable SSE streams (`client`, `stream`), the wire types
(`types`) and the errors the client raises (`errors`)."""
