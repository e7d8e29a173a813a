-- The replica a question waits in (service/question_holders.py): another replica that gets
-- the answer says where to send it.

CREATE TABLE parked_questions (
    question_id TEXT PRIMARY KEY,
    replica INTEGER NOT NULL,
    replica_name TEXT NOT NULL,
    parked_at DOUBLE PRECISION NOT NULL
);
