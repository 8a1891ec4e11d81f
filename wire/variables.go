package wire

import (
	"regexp"
	"strings"
)

// Variable is one REMIT_* environment variable that configures Remit: its name, the flag that
// overrides it (if any), its default and what it does, the last two in Markdown (the README's
// words). Variables is the one list: FromEnv reads exactly these names
// (TestFromEnvReadsTheVariables), `remit <command> --help` prints them (cmd/remit), and the
// README's configuration table is these rows (TestReadmeConfigurationTable).
type Variable struct {
	Name, Flag, Default, Meaning string
}

// Variables lists every variable FromEnv reads, in the README's order.
var Variables = []Variable{
	{"REMIT_ADDR", "--addr", "`127.0.0.1:8080`", "listen address"},
	{"REMIT_DATABASE_URL", "--database-url", "`sqlite:remit.db`", "`sqlite:PATH` or `postgres://user@host:5432/db` (PostgreSQL 14+); every command but `serve`, `migrate` and `bootstrap` refuses a store that does not exist (a missing SQLite file, a PostgreSQL schema never migrated) instead of creating one"},
	{"REMIT_PUBLIC_URL", "--public-url", "`http://` + listen address", "base of `claimUrl`, hosted URLs (`paymentUrl`, `hostedInvoiceUrl`, setup sessions), the dashboard's set-password links and `docsUrl`"},
	{"REMIT_RATE_LIMIT", "", "`100`", "requests per second per API key"},
	{"REMIT_RATE_BURST", "", "`200`", "bucket size per API key"},
	{"REMIT_REDIS_URL", "", "(none)", "share the API's rate limit and the dashboard's sign-in limits between processes through Redis"},
	{"REMIT_WEBHOOK_RETRY_SCHEDULE", "", "`5s,5m,30m,2h,5h,10h,10h`", "waits between webhook attempts"},
	{"REMIT_WEBHOOK_ALLOW_PRIVATE", "", "on in sandbox, off in production", "allow webhook URLs on loopback/private addresses"},
	{"REMIT_WEBHOOK_LEASE", "", "`1m`", "how long a worker holds a claimed delivery"},
	{"REMIT_WEBHOOK_CONCURRENCY", "", "`16`", "webhook attempts in flight per process"},
	{"REMIT_SECRET_KEY", "", "a random key kept in the store", "key material for what is stored sealed (webhook signing secrets, remembered idempotent answers); set it in production, the same in every process, and keep it: what was sealed with it cannot be opened without it"},
	{"REMIT_TAX_RATES_FILE", "", "the shipped table", "a JSON rate table replacing the built-in one"},
	{"REMIT_TAX_PROVIDER", "", "`builtin`", "`builtin` (the rate table) or `stripe`: drafts and finalization ask Stripe Tax (with `REMIT_STRIPE_SECRET_KEY`), a finalized invoice's tax transaction is recorded from its calculation, credit notes and voids as reversals; Stripe not answering is 503 `tax_provider_unavailable` at finalization ([docs/invoices-and-tax.md](docs/invoices-and-tax.md#tax-providers))"},
	{"REMIT_DISABLED_OPERATIONS", "", "(none)", "comma-separated operationIds this deployment answers with 501"},
	{"REMIT_SCHEDULER_INTERVAL", "", "`1s`", "how often due work (expiries, renewals, cutoffs) is looked for, and how often an idle webhook worker looks for deliveries other processes created"},
	{"REMIT_DATABASE_MAX_CONNS", "", "`32`", "PostgreSQL connections per process; several processes together must stay under the server's `max_connections` (100 by default)"},
	{"REMIT_IDEMPOTENCY_LEASE", "", "`1m`", "how long a request that died in flight holds its Idempotency-Key (retries meanwhile get 409 `idempotency_key_in_flight`)"},
	{"REMIT_READ_HEADER_TIMEOUT", "", "`10s`", "a client must send its request headers within this"},
	{"REMIT_READ_TIMEOUT", "", "`30s`", "a client must send its whole request, body included, within this"},
	{"REMIT_PROCESSOR_TIMEOUT", "", "`10s`", "one payment processor call; an attempt whose call runs longer stays `processing` for the reconciler"},
	{"REMIT_RECONCILE_INTERVAL", "", "`30s`", "how often `serve` finishes payment attempts left `processing` (also: `remit reconcile`)"},
	{"REMIT_VERIFY_INTERVAL", "", "`1h`", "how often `serve` runs the money checks over every merchant account (also: `remit verify`; docs/verification.md)"},
	{"REMIT_SANDBOX_PROCESSOR_LATENCY", "", "`0`", "every sandbox charge and refund answers this much later"},
	{"REMIT_STRIPE_SECRET_KEY", "", "(none)", "turns the Stripe connector on for production merchant accounts"},
	{"REMIT_STRIPE_API_URL", "", "Stripe's", "Stripe's API base (tests point it at stripe-mock)"},
	{"REMIT_STRIPE_SANDBOX", "", "`false`", "sandbox merchant accounts charge through Stripe too"},
	{"REMIT_STRIPE_WEBHOOK_SECRET", "", "(none)", "verifies `POST /processor-webhooks/stripe` (without it that route answers 400: nothing can be verified)"},
	{"REMIT_DUNNING_SCHEDULE", "", "`3d,5d,7d`", "retries of a failed automatic charge, days after the first failure (docs/dunning.md)"},
	{"REMIT_SMTP_URL", "", "(none)", "`smtp://user:pass@host:port`: sends customer e-mail (STARTTLS when offered); without it every message is recorded `skipped` (docs/email.md)"},
	{"REMIT_EMAIL_FROM", "", "`billing@remit.invalid`", "the sender address of customer e-mail; the merchant account's display name is shown with it"},
	{"REMIT_EMAIL_RETRY_SCHEDULE", "", "`5s,5m,30m,2h,5h,10h,10h`", "waits between send attempts of a message the SMTP server did not take; after the last, the message is `failed`"},
	{"REMIT_EMAIL_BUSY_RATE", "", "`5`", "messages a second the e-mail worker sends at most while the API is busy (over half of the last 250 ms serving requests); raise it if a steady load leaves a backlog (docs/email.md)"},
	{"REMIT_STRIPE_PUBLISHABLE_KEY", "", "(none)", "the publishable key (`pk_…`) the hosted setup page starts Stripe's card element with; production setup pages need it"},
	{"REMIT_LOG_LEVEL", "", "`info`", "`debug`, `info`, `warn`, `error` (JSON logs on stderr)"},
	{"REMIT_PPROF", "", "`false`", "mount `/debug/pprof`"},
	{"REMIT_METRICS_TOKEN", "", "(none)", "`GET /metrics` asks for `Authorization: Bearer <token>` (401 without it; compared in constant time) ([docs/operations.md](docs/operations.md#metrics-endpoint))"},
	{"REMIT_METRICS_ADDR", "", "(none)", "serve `GET /metrics` on this address only (its own listener), not on the API's ([docs/operations.md](docs/operations.md#metrics-endpoint))"},
	{"REMIT_LOAD_CEILING", "", "`false`", "also serve `GET /_load/ceiling`, the load harness's bare baseline ([docs/performance.md](docs/performance.md))"},
	{"REMIT_AUTO_MIGRATE", "", "`true`", "`false`: `serve` and the other subcommands do not migrate the store (`remit migrate` does); `/readyz` answers 503 until the schema is current ([docs/operations.md](docs/operations.md#readiness))"},
}

// LookupVariable returns the variable named name.
func LookupVariable(name string) (Variable, bool) {
	for _, v := range Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// ReadmeRow is v as a row of the README's configuration table.
func ReadmeRow(v Variable) string {
	flag := "|"
	if v.Flag != "" {
		flag = "`" + v.Flag + "` |"
	}
	return "| `" + v.Name + "` | " + flag + " " + v.Default + " | " + v.Meaning + " |"
}

var markdownLink = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)

// Plain is Markdown text as a terminal shows it: no backticks, a link as its text and target.
func Plain(md string) string {
	md = markdownLink.ReplaceAllStringFunc(md, func(l string) string {
		m := markdownLink.FindStringSubmatch(l)
		if strings.HasPrefix(m[2], m[1]) {
			return m[2]
		}
		return m[1] + " (" + m[2] + ")"
	})
	return strings.ReplaceAll(md, "`", "")
}
