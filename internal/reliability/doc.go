// Package reliability holds Remit's process-level reliability tests: `serve` killed with SIGKILL
// under concurrent idempotent writes, PostgreSQL stopped and restarted under load, several `serve`
// processes on one store, slow clients. The promises they prove and the soak command are in
// docs/reliability.md. The package has no code of its own.
package reliability
