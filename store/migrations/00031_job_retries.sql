-- +goose Up
-- Scheduled work that fails is tried again (docs/reliability.md, "Scheduled work that fails"):
--   - scheduled_at keeps the moment a job is for (a renewal at its period's end) once a failed
--     attempt moved due_at, its next attempt, later; NULL while they are the same;
--   - last_error holds the API's words for the last failure ({"code","message"} as JSON text);
--   - jobs_failed lists the jobs failed for good, newest first (GET /v1/jobs?status=failed, the
--     dashboard, /metrics), and jobs_created every job of an account (GET /v1/jobs).
ALTER TABLE jobs ADD COLUMN scheduled_at BIGINT;
CREATE INDEX jobs_failed ON jobs(merchant_account_id, created_at, id) WHERE status = 'failed';
CREATE INDEX jobs_created ON jobs(merchant_account_id, created_at, id);

-- +goose Down
DROP INDEX jobs_created;
DROP INDEX jobs_failed;
ALTER TABLE jobs DROP COLUMN scheduled_at;
