"""`/hermes new|reset|model|skill|export|memory|status`."""
