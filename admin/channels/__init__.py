"""`/api/channels/{platform}/{workspace}/{channel}`: the settings of a channel, or of a whole
workspace or guild (channel `*`), that conversations started there take (docs/channels.md)."""
