"""The agent as the runtime sees it: the Bridge (`bridge`: port, client, streams, wire types),
its typed events, the thinking reducer, the model catalogue and the default model."""
