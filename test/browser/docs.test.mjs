// The API reference in a real browser: headless Chromium (Debian's package) loads GET /docs from a
// running Remit (REMIT_URL), and every operation of GET /openapi.yaml must be rendered with its
// method, path, summary and examples; the guide pages must answer; nothing may be fetched from
// another host. Screenshots go to SCREENSHOT_DIR. Run by run.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { parse } from 'yaml';

const base = process.env.REMIT_URL;
if (!base) throw new Error('REMIT_URL (the running server, such as http://127.0.0.1:8080) is required');
const origin = new URL(base).origin;
const shots = process.env.SCREENSHOT_DIR || join(process.cwd(), 'out');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const exampleRequestId = 'req_01jy5c3kq8w2n4m6p9r0t7v1xz';

let context, profile;
// Requests to another host, until the browser reports them blocked by the page's
// Content-Security-Policy (they then never left the browser).
const foreign = new Map();

before(async () => {
  mkdirSync(shots, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'remit-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol !== 'blob:' && u.protocol !== 'data:' && u.origin !== origin) foreign.set(r, r.url());
  });
  context.on('requestfailed', (r) => {
    if (foreign.has(r) && r.failure()?.errorText === 'csp') foreign.delete(r);
  });
});

after(async () => {
  await context?.close();
  rmSync(profile, { recursive: true, force: true });
});

async function contract() {
  const res = await fetch(base + '/openapi.yaml');
  assert.equal(res.status, 200, 'GET /openapi.yaml');
  const doc = parse(await res.text());
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      // A CSV answer's sample is the file, not a JSON envelope with its request ID.
      const csv = op.responses?.['200']?.content?.['text/csv']?.example?.split(',')[0] ?? null;
      ops.push({ id: op.operationId, method, path, summary: op.summary, hasBody: !!op.requestBody, csv });
    }
  }
  return ops;
}

test('GET /docs lists every operation of the contract with its examples', async () => {
  const ops = await contract();
  assert.ok(ops.length >= 49, `only ${ops.length} operations in /openapi.yaml`);

  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const res = await page.goto(base + '/docs', { waitUntil: 'load' });
  assert.equal(res.status(), 200);
  assert.match(res.headers()['content-security-policy'] || '', /default-src 'self'/);
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
  await page.screenshot({ path: join(shots, 'docs.png') });

  const rendered = new Map(await page.$$eval('[data-section-id^="operation/"]', (els) =>
    els.map((e) => [e.getAttribute('data-section-id').slice('operation/'.length), e.innerText])));
  const missing = [];
  for (const op of ops) {
    const text = rendered.get(op.id);
    if (text === undefined) { missing.push(`${op.id}: not rendered`); continue; }
    if (!text.includes(op.summary)) missing.push(`${op.id}: summary "${op.summary}" not shown`);
    if (!text.toLowerCase().includes(op.method) || !text.includes(op.path)) missing.push(`${op.id}: ${op.method.toUpperCase()} ${op.path} not shown`);
    if (!text.includes('Response samples') || !text.includes(op.csv ?? exampleRequestId)) missing.push(`${op.id}: no response example`);
    if (op.hasBody && !text.includes('Request samples')) missing.push(`${op.id}: no request example`);
  }
  assert.deepEqual(missing, [], `operations missing from /docs:\n${missing.join('\n')}`);
  assert.equal(rendered.size, ops.length, 'the page renders exactly the operations of the contract');

  // Every tag of the contract has its group in the sidebar.
  const tags = await page.$$eval('[data-item-id^="tag/"]', (els) => els.length);
  assert.ok(tags >= 15, `only ${tags} tag groups in the sidebar`);

  // One operation in full, for the screenshot: the invoice finalization.
  await page.locator('[data-section-id="operation/finalizeInvoice"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, 'docs-finalize-invoice.png') });
  assert.deepEqual(errors, [], 'the page raised no script error');
  await page.close();
});

test('the reference links the errors guide and the event catalog', async () => {
  const page = await context.newPage();
  await page.goto(base + '/docs');
  await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
  for (const [link, heading] of [['Errors guide', 'Errors'], ['Event catalog', 'Events and webhooks']]) {
    await page.click(`nav.remit-nav >> text=${link}`);
    await page.waitForLoadState('load');
    assert.equal(await page.locator('h1').first().innerText(), heading, `${link} page`);
    await page.screenshot({ path: join(shots, `${link.toLowerCase().replace(/ /g, '-')}.png`) });
    await page.goBack();
    await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
  }
  // The guides are linked from the contract's description too.
  assert.ok(await page.locator('a[href="/docs/errors"]').count() >= 2);
  assert.ok(await page.locator('a[href="/docs/events"]').count() >= 2);
  await page.goto(base + '/docs/events');
  assert.ok(await page.locator('table code', { hasText: 'invoice.finalized' }).count() >= 1, 'the catalog lists invoice.finalized');
  await page.goto(base + '/docs/errors#validation_failure');
  assert.ok(await page.locator('section#validation_failure').isVisible());
  await page.close();
});

test('nothing is fetched from another host', () => {
  const left = [...foreign.values()];
  assert.deepEqual(left, [], `requests that left for another host:\n${left.join('\n')}`);
});
