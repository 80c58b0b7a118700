"""What every test HTTP server of ours is given."""

# Seconds uvicorn keeps an idle keep-alive connection. A test's client keeps its connection for
# the whole test; with uvicorn's default of 5 s, a request sent while the server closes an idle
# connection fails with a ReadError under load. An hour outlasts any test.
KEEP_ALIVE = 3600
