-- The server's stores as their SQLite tables have them (service/tasks.py,
-- responses_store.py, agent_tasks.py, projects.py); a table listed in insertion order
-- has a `rowid` column, as SQLite's tables have one of their own.

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    dialect TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    error TEXT
);

CREATE TABLE responses (
    id TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    input_items TEXT NOT NULL,
    response TEXT NOT NULL,
    rowid BIGSERIAL
);

CREATE TABLE response_items (
    item_id TEXT NOT NULL,
    response_id TEXT NOT NULL,
    chars INTEGER,
    rowid BIGSERIAL,
    PRIMARY KEY (item_id, response_id)
);

CREATE INDEX response_items_by_response ON response_items (response_id);

CREATE TABLE agent_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_ns BIGINT,
    document BYTEA NOT NULL,
    rowid BIGSERIAL
);

CREATE INDEX agent_tasks_by_owner ON agent_tasks (owner, context_id, status_ns, id);

CREATE TABLE projects (
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
);
