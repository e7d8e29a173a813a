"""farmhand as an A2A 1.0 agent: the agent card, the executor that runs a message as a
chat of the service's, the task store over farmhand's SQLite file, and the JSON-RPC
endpoint, built from the official `a2a-sdk`'s request handler and dispatcher."""
