-- The replica running a task (service/postgres.py: its advisory lock says whether it still
-- runs), so that another replica can fail a task whose replica died.

ALTER TABLE tasks ADD COLUMN replica INTEGER;
