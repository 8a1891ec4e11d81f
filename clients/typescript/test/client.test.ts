// The TypeScript client against a live `remit serve` (clients/typescript/run.sh starts one on a
// fresh SQLite store and bootstraps an organization): REMIT_URL is the server, REMIT_BOOTSTRAP_JSON
// the output of `remit bootstrap --json`. Every call is typed by the contract: a field the contract
// does not have would not compile.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRemitClient, isRemitError, RemitError, type Schemas } from "../src/index.js";

const baseUrl = process.env.REMIT_URL;
const bootstrapFile = process.env.REMIT_BOOTSTRAP_JSON;
if (!baseUrl || !bootstrapFile) {
  throw new Error("set REMIT_URL and REMIT_BOOTSTRAP_JSON (clients/typescript/run.sh does)");
}
const tenant = JSON.parse(readFileSync(bootstrapFile, "utf8")) as { apiKey: string; merchantAccounts: { sandbox: string } };
const remit = createRemitClient({ baseUrl, apiKey: tenant.apiKey, merchantAccountId: tenant.merchantAccounts.sandbox });
const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

// rejects runs fn and returns the RemitError it rejects with.
async function rejects(fn: () => Promise<unknown>): Promise<RemitError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof RemitError, `not a RemitError: ${String(err)}`);
    return err;
  }
  assert.fail("the call did not reject");
}

test("a customer, an invoice, finalized; the events listed page by page", async () => {
  const { data: price } = await remit.post("/v1/prices", {
    body: { priceId: `price_ts_${run}`, productId: "prod_ts", name: "TypeScript plan", priceType: "fixed_one_time", currency: "USD", unitAmount: 4200 },
  });
  assert.equal(price.unitAmount, 4200);

  const { data: customer, requestId } = await remit.post("/v1/customers", { body: { name: "Typed Co", email: "billing@typed.example" } });
  assert.match(requestId, /^req_/);
  assert.ok(customer.customerId);
  const { data: again } = await remit.get("/v1/customers/{customerId}", { params: { path: { customerId: customer.customerId } } });
  assert.equal(again.name, "Typed Co");

  const { data: account } = await remit.post("/v1/billing-accounts", { body: { customerId: customer.customerId, currency: "USD" } });
  const { data: draft } = await remit.post("/v1/invoices", {
    body: { customerId: customer.customerId, billingAccountId: account.billingAccountId!, currency: "USD", lines: [{ priceId: price.priceId!, quantity: 2 }] },
  });
  assert.equal(draft.status, "draft");
  assert.equal(draft.subtotal, 8400);
  const invoiceId = draft.invoiceId!;

  const { data: open } = await remit.post("/v1/invoices/{invoiceId}/finalize", { params: { path: { invoiceId } }, body: { finalizedByRef: "typescript" } });
  assert.equal(open.status, "open");
  assert.ok(open.number, "a finalized invoice has a number");

  // Finalizing again: 409 with the state that forbids it.
  const conflict = await rejects(() => remit.post("/v1/invoices/{invoiceId}/finalize", { params: { path: { invoiceId } }, body: {} }));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.code, "conflict");
  assert.equal(conflict.currentState(), "open");
  assert.match(conflict.idempotencyKey ?? "", /^remit-ts-/);

  // The events, two a page, newest first, until nextCursor is null: each once, ours among them.
  const seen: Schemas["Event"][] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const { data: page } = await remit.get("/v1/events", { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } });
    const items = page.items ?? [];
    assert.ok(items.length <= 2, `a page of ${items.length} with limit 2`);
    seen.push(...items);
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor && pages < 500);
  assert.equal(cursor, undefined, "the pages end");
  assert.ok(pages >= 3, `${pages} pages`);
  const ids = seen.map((e) => e.eventId);
  assert.equal(new Set(ids).size, ids.length, "no event is on two pages");
  const about = (type: string, field: string, id: string) => seen.some((e) => e.type === type && (e.data?.object as Record<string, unknown> | undefined)?.[field] === id);
  assert.ok(about("customer.created", "customerId", customer.customerId), "customer.created of our customer");
  assert.ok(about("invoice.finalized", "invoiceId", invoiceId), "invoice.finalized of our invoice");
  const created = seen.map((e) => e.createdAt ?? "");
  assert.deepEqual(created, [...created].sort().reverse(), "newest first");
});

test("errors come back as RemitError with the envelope", async () => {
  const invalid = await rejects(() => remit.post("/v1/customers", { body: { name: "", email: "not an address" } }));
  assert.equal(invalid.status, 422);
  assert.ok(isRemitError(invalid, "validation_failure"));
  assert.ok(invalid.field("name"), `problems: ${JSON.stringify(invalid.fields)}`);
  assert.ok(invalid.field("email"), "every problem is listed, not only the first");
  assert.match(invalid.docsUrl ?? "", /\/docs\/errors#validation_failure$/);
  assert.match(invalid.requestId ?? "", /^req_/);

  const missing = await rejects(() => remit.get("/v1/customers/{customerId}", { params: { path: { customerId: `cus_nobody_${run}` } } }));
  assert.equal(missing.status, 404);
  assert.equal(missing.code, "not_found");

  const stranger = createRemitClient({ baseUrl: baseUrl!, apiKey: "rk_nope.nope", merchantAccountId: tenant.merchantAccounts.sandbox });
  const unauthorized = await rejects(() => stranger.get("/v1/events"));
  assert.equal(unauthorized.status, 401);
  assert.equal(unauthorized.code, "unauthorized");
});

test("an Idempotency-Key per write: a retry with the same key replays, another body is refused", async () => {
  const key = `ts-${run}-retry`;
  const body = { customerId: `cus_ts_${run}`, name: "Retry Co" };
  const first = await remit.post("/v1/customers", { body, headers: { "Idempotency-Key": key } });
  const replay = await remit.post("/v1/customers", { body, headers: { "Idempotency-Key": key } });
  assert.equal(replay.data.customerId, first.data.customerId);
  assert.equal(replay.requestId, first.requestId, "the replay is the first answer");
  const reused = await rejects(() => remit.post("/v1/customers", { body: { ...body, name: "Other Co" }, headers: { "Idempotency-Key": key } }));
  assert.equal(reused.status, 409);
  assert.equal(reused.reason(), "idempotency_key_reused");
  assert.equal(reused.idempotencyKey, key);
  // Without a key of its own each write gets a fresh one: the same body twice makes two customers.
  const a = await remit.post("/v1/customers", { body: { name: "Twice Co" } });
  const b = await remit.post("/v1/customers", { body: { name: "Twice Co" } });
  assert.notEqual(a.data.customerId, b.data.customerId);
});

test("the scope: a call's own environment and merchant account win over the client's", async () => {
  const other = createRemitClient({ baseUrl: baseUrl!, apiKey: tenant.apiKey, merchantAccountId: "ma_not_ours" });
  const forbidden = await rejects(() => other.get("/v1/events"));
  assert.equal(forbidden.status, 403);
  const { data } = await other.get("/v1/events", { params: { query: { merchantAccountId: tenant.merchantAccounts.sandbox, environment: "sandbox", limit: 1 } } });
  assert.ok((data.items ?? []).length <= 1);
});

test("an update: a merge patch, its Idempotency-Key, null clearing a field", async () => {
  const { data: customer } = await remit.post("/v1/customers", { body: { name: "Patched Co", email: "old@patched.example" } });
  const path = { params: { path: { customerId: customer.customerId! } } };
  const { data: patched } = await remit.patch("/v1/customers/{customerId}", {
    ...path,
    body: { email: null, metadata: { tier: "gold" } },
    headers: { "Idempotency-Key": `patch-${run}` },
  });
  assert.equal(patched.email, null);
  assert.deepEqual(patched.metadata, { tier: "gold" });
  const { data: replayed } = await remit.patch("/v1/customers/{customerId}", {
    ...path,
    body: { email: null, metadata: { tier: "gold" } },
    headers: { "Idempotency-Key": `patch-${run}` },
  });
  assert.deepEqual(replayed, patched);
  const err = await rejects(() => remit.patch("/v1/customers/{customerId}", { ...path, body: { name: null } as never }));
  assert.equal(err.status, 422);
});
