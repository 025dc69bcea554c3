// The console's end-to-end journey in Debian's Chromium (playwright-core, no
// browser download), run by scripts/e2e against the real gateway binary and
// the upstream simulator: first-run setup with the code from the log, forced
// 2FA enrollment, an API key created and used on /v1 from this script,
// primary connected by the device flow, a custom server by API key, the
// assistant vendor by device code, the messages vendor through the real relay
// script (run as a user would, its listener reached by the browser), each
// then used on /v1, a streamed playground chat in both
// formats, usage, every admin page, a guardrail profile and rule made in
// the console and a request blocked by it, the live log stream, a user created, sign-out and sign-in with
// TOTP, the new user's forced password change and 2FA, a non-admin refused,
// the lockout. Every page is checked by axe-core (no serious or critical
// violation) and shot in both themes into OUT. Any failed step, page error or
// accessibility violation makes the exit status non-zero.
//
// Needs: a fresh gateway in full mode (no admin yet) with the simulator, its
// log in GATEWAY_LOG (the setup code is read from it), the console at BASE.
//
//   BASE=http://127.0.0.1:8000 GATEWAY_LOG=/tmp/gw.log OUT=/tmp/shots node e2e/journey.mjs
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BASE = process.env.BASE ?? 'http://127.0.0.1:5173';
const OUT = process.env.OUT ?? mkdtempSync(join(tmpdir(), 'console-shots-'));
mkdirSync(OUT, { recursive: true });
const GATEWAY_LOG = process.env.GATEWAY_LOG ?? 'gw.log';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ADMIN = 'admin@example.com';
const PW = 'correct horse battery staple';

function base32(s) {
  const alpha = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of s.replace(/[\s=]/g, '').toUpperCase()) bits += alpha.indexOf(c).toString(2).padStart(5, '0');
  const out = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) out.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(out);
}
function totp(secret, t = Date.now()) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(t / 30000)));
  const h = createHmac('sha1', base32(secret)).update(counter).digest();
  const o = h[h.length - 1] & 15;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1e6).padStart(6, '0');
}

/** Wait until something listens on 127.0.0.1:`port`. */
async function waitForPort(port, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const open = await new Promise((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** One /v1 chat with `key` and `model`; throws unless it answers 200. */
async function v1Chat(key, model) {
  const resp = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  if (resp.status !== 200) throw new Error(`/v1 with ${model}: ${resp.status} ${await resp.text()}`);
}

const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'chr-')), {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1360, height: 900 },
  // The console's CSP allows no inline script; axe-core is injected as one.
  bypassCSP: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const browser = ctx;
const page = ctx.pages()[0] ?? await ctx.newPage();
const errors = [];
const axeViolations = [];
const AXE = join(dirname(fileURLToPath(import.meta.url)), '../node_modules/axe-core/axe.min.js');
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', (e) => errors.push(String(e)));

// A failed step leaves a screenshot of the page as it was (failure.png)
// and the page's alerts in the output, then fails the run.
process.on('uncaughtException', async (e) => {
  console.error(e);
  try {
    await page.screenshot({ path: `${OUT}/failure.png`, fullPage: true });
    const alerts = await page.locator('[role="alert"], .notice, .error-text').allTextContents();
    console.error('page alerts:', alerts);
  } catch (shotError) {
    console.error('no failure screenshot:', shotError);
  }
  process.exit(1);
});

// axe-core on the page as it is: serious and critical violations fail the run.
async function checkA11y(name, scheme) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) {
    await page.addScriptTag({ path: AXE });
  }
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  for (const v of found) axeViolations.push(`${name} [${scheme}]: ${v}`);
}

async function shot(name, full = true) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(250);
    await checkA11y(name, scheme);
    if (full) {
      const h = await page.evaluate(() => document.documentElement.scrollHeight);
      await page.setViewportSize({ width: 1360, height: Math.max(900, h) });
      await page.waitForTimeout(150);
    }
    await page.screenshot({ path: `${OUT}/${name}-${scheme}.png` });
    await page.setViewportSize({ width: 1360, height: 900 });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}
// Every /_ui/api call, by page (the figures of docs/benchmarks.md, "Console").
let currentPage = 'start';
const apiCalls = [];
page.on('request', (r) => {
  const u = new URL(r.url());
  if (u.pathname.startsWith('/_ui/api/')) apiCalls.push({ t: Date.now(), page: currentPage, call: `${r.method()} ${u.pathname}` });
});
const step = (s) => {
  currentPage = s;
  console.log('--', s);
};

step('setup');
const loadStart = Date.now();
await page.goto(`${BASE}/_ui/`);
await page.waitForURL('**/_ui/setup');
await page.getByRole('heading', { name: 'Set up the gateway' }).waitFor();
const firstRender = Date.now() - loadStart;
const nav = await page.evaluate(() => {
  const n = performance.getEntriesByType('navigation')[0];
  const bytes = performance.getEntriesByType('resource').reduce((sum, r) => sum + (r.transferSize || 0), n.transferSize || 0);
  return { domContentLoaded: Math.round(n.domContentLoadedEventEnd), load: Math.round(n.loadEventEnd), bytes };
});
await page.getByRole('button', { name: 'Create administrator' }).click();
await shot('01-setup-validation');
const code = readFileSync(GATEWAY_LOG, 'utf8').match(/setup code (\S+)/)?.[1];
await page.getByLabel('Setup code').fill(code);
await page.getByLabel('Administrator email').fill(ADMIN);
await page.getByLabel('Password', { exact: true }).fill(PW);
await page.getByLabel('Repeat the password').fill(PW);
await page.getByRole('button', { name: 'Create administrator' }).click();
await page.waitForURL('**/_ui/setup-2fa');
await page.getByLabel('TOTP secret').waitFor();
await shot('02-setup-2fa');
let secret = (await page.getByLabel('TOTP secret').textContent()).replace(/\s/g, '');
await page.getByLabel('Code from the app').fill(totp(secret));
await page.getByRole('button', { name: 'Verify and turn on' }).click();
await page.getByRole('list', { name: 'Recovery codes' }).waitFor();
await shot('03-recovery-codes');
await page.getByLabel('I have saved my recovery codes').check();
await page.getByRole('button', { name: 'Continue to the console' }).click();
await page.waitForURL(/\/_ui\/?$/);
await page.getByRole('heading', { name: 'Overview' }).waitFor();
await page.waitForTimeout(800);
await shot('04-overview-empty');

step('keys');
await page.getByRole('link', { name: 'API keys' }).click();
await page.getByLabel('Label').fill('laptop');
await page.getByRole('button', { name: 'Create key' }).click();
await page.getByRole('dialog').waitFor();
const key = (await page.getByLabel('New API key', { exact: true }).textContent()).trim();
await shot('05-key-created', false);
await page.getByRole('button', { name: 'I have copied it' }).click();
await shot('06-keys');

step('providers');
await page.getByRole('link', { name: 'Providers' }).click();
await page.getByRole('button', { name: 'Connect', exact: true }).first().waitFor();
await page.waitForTimeout(500);
await shot('07-providers');
await page.getByRole('button', { name: 'Connect', exact: true }).first().click();
await page.getByLabel('User code').waitFor();
await shot('08-device-flow');
await page.getByText('Connected. Requests to the primary provider').waitFor({ timeout: 30000 });
await shot('09-providers-connected');

step('connect a custom server by API key');
if (process.env.CUSTOM_URL) {
  await page.getByRole('button', { name: 'Connect', exact: true }).last().click();
  await page.getByLabel(/^Base URL/).fill(process.env.CUSTOM_URL);
  await page.getByLabel('API key (optional)').fill('sk-refused-key');
  await page.getByRole('button', { name: 'Check and save' }).click();
  await page.getByText(/the provider refused it/).waitFor({ timeout: 15000 });
  await shot('09a-providers-custom-refused', false);
  await page.getByLabel('API key (optional)').fill(process.env.CUSTOM_KEY ?? '');
  await page.getByLabel('Label (optional)').last().fill('lab server');
  await page.getByRole('button', { name: 'Check and save' }).click();
  await page.getByText('lab server').first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(300);
  await shot('09b-providers-custom-connected');
  const resp = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'custom/llama3', messages: [{ role: 'user', content: 'hi' }] }),
  });
  if (resp.status !== 200) throw new Error(`/v1 to the connected custom server: ${resp.status} ${await resp.text()}`);
}

step('connect the assistant vendor by device code');
{
  const card = page.getByRole('region', { name: 'Assistant vendor' });
  await card.getByRole('button', { name: 'Connect', exact: true }).click();
  await card.getByRole('button', { name: 'Connect with a device code' }).click();
  // The simulated code host approves at the second poll.
  await card.getByText(/^Connected as /).waitFor({ timeout: 30000 });
  await shot('09c-providers-assistant-connected');
  await v1Chat(key, 'assistant_vendor/gpt-4o');
}

step('connect the messages vendor through the relay script');
{
  const card = page.getByRole('region', { name: 'Messages API vendor' });
  await card.getByRole('button', { name: 'Connect', exact: true }).click();
  await card.getByRole('button', { name: 'Start sign-in' }).click();
  const command = (await card.locator('.secret-box code').textContent()).trim();
  await shot('09d-providers-relay-started', false);
  // The user runs the shown command in a terminal: it listens on port 54545.
  const script = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
  let scriptOut = '';
  script.stdout.on('data', (d) => { scriptOut += d; });
  script.stderr.on('data', (d) => { scriptOut += d; });
  const ended = new Promise((resolve) => script.on('exit', resolve));
  await waitForPort(54545, 15000);
  // Then opens the provider's page; the simulated person approves at once and
  // the browser lands on the script's listener.
  const [signin] = await Promise.all([
    ctx.waitForEvent('page'),
    card.getByRole('link', { name: /sign-in page/ }).click(),
  ]);
  await signin.getByText(/^Signed in/).waitFor({ timeout: 15000 });
  await signin.close();
  const status = await ended;
  if (status !== 0 || !scriptOut.includes('"ok":true')) throw new Error(`relay script: ${status} ${scriptOut}`);
  await card.getByText('Connected: the new account is listed above.').waitFor({ timeout: 20000 });
  await page.waitForTimeout(300);
  await shot('09e-providers-messages-connected');
  await v1Chat(key, 'messages_vendor/claude-sonnet-4-5');
}

step('the key on /v1, from outside the browser');
{
  const resp = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = await resp.json();
  if (resp.status !== 200 || !body.choices?.[0]?.message?.content) {
    throw new Error(`/v1 with the console's key: ${resp.status} ${JSON.stringify(body)}`);
  }
  const models = await fetch(`${BASE}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  if (models.status !== 200) throw new Error(`/v1/models: ${models.status}`);
  const missing = await fetch(`${BASE}/_ui/api/no/such/call`);
  if (missing.status !== 404 || !(missing.headers.get('content-type') ?? '').includes('application/json')) {
    throw new Error(`an unknown /_ui/api path: ${missing.status} ${missing.headers.get('content-type')}`);
  }
}

step('playground');
await page.getByRole('link', { name: 'Playground' }).click();
// The Providers page has an "API key" field too: wait for the playground.
await page.getByRole('heading', { name: 'Playground' }).waitFor();
await page.getByLabel('API key').fill(key);
// The model list (/_ui/api/models) may arrive after the page: wait for it
// rather than racing it, then pick a primary model by name.
await page.locator('select option[value="claude-sonnet-4.5"]').first().waitFor({ state: 'attached', timeout: 15000 });
await page.getByLabel('Model', { exact: true }).selectOption('claude-sonnet-4.5');
await page.getByLabel('Message', { exact: true }).fill('Say hello in three words.');
await page.getByRole('button', { name: 'Send' }).click();
await page.locator('.msg-assistant .msg-text').first().waitFor();
await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30000 });
await page.waitForTimeout(300);
await shot('10-playground-openai');
await page.getByLabel('Messages', { exact: true }).check();
await page.getByLabel('Message', { exact: true }).fill('And once more, as messages.');
await page.getByRole('button', { name: 'Send' }).click();
await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 30000 });
await page.getByRole('tab', { name: 'Usage' }).click();
await shot('11-playground-anthropic-usage');
await page.getByRole('tab', { name: 'curl' }).click();
await shot('12-playground-curl');

step('usage');
await page.waitForTimeout(2500);
await page.getByRole('link', { name: 'Usage' }).click();
await page.getByRole('heading', { name: 'Table' }).waitFor();
await shot('13-usage-day');
await page.getByLabel('Group by').selectOption('model');
await page.waitForTimeout(600);
await shot('14-usage-model');
await page.getByRole('link', { name: 'Overview' }).click();
await page.waitForTimeout(1200);
await shot('15-overview');

step('a key limited to 2 requests a minute: refused with 429 and the headers');
await page.getByRole('link', { name: 'API keys' }).click();
await page.getByLabel('Label').fill('limited');
await page.getByLabel('Requests / min').fill('2');
await page.getByLabel('Budget (USD)').fill('5');
await page.getByRole('button', { name: 'Create key' }).click();
await page.getByRole('dialog').waitFor();
const limitedKey = (await page.getByLabel('New API key', { exact: true }).textContent()).trim();
await page.getByRole('button', { name: 'I have copied it' }).click();
await page.getByText('2 requests/min').waitFor();
await shot('06b-keys-limits');
{
  // Five at once: two fit a minute, four at most if a minute turns between.
  const statuses = [];
  let refusal = null;
  for (let i = 0; i < 5; i++) {
    const resp = await fetch(`${BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${limitedKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'hi' }] }),
    });
    statuses.push(resp.status);
    if (resp.status === 429) refusal = { headers: resp.headers, body: await resp.json() };
    else await resp.arrayBuffer();
  }
  if (!refusal || refusal.body.error?.type !== 'rate_limited' || refusal.headers.get('x-ratelimit-limit-requests') !== '2' || !refusal.headers.get('retry-after')) {
    throw new Error(`a rate-limited key: ${statuses} ${JSON.stringify(refusal?.body)}`);
  }
}

step('overview, left open for 15 s (polling)');
await page.getByRole('link', { name: 'Overview' }).click();
await page.waitForTimeout(15000);

step('admin pages');
for (const [name, label] of [['16-users', 'Users'], ['17-domains', 'Domains'], ['18-sso', 'SSO'], ['19-config', 'Configuration'], ['20-models', 'Models'], ['21-pool', 'Provider pool'], ['22-guardrails', 'Guardrails'], ['23-logs', 'Logs'], ['24-system', 'System']]) {
  currentPage = `admin: ${label}`;
  await page.getByRole('navigation').getByRole('link', { name: label, exact: true }).click();
  await page.waitForTimeout(1200);
  await shot(name);
}

step('logs: the live stream shows the history and new lines');
currentPage = 'admin: Logs';
await page.getByRole('navigation').getByRole('link', { name: 'Logs', exact: true }).click();
await page.locator('.log-line').first().waitFor();
{
  const resp = await fetch(`${BASE}/health`, { headers: { 'x-request-id': 'e2e-live-line' } });
  await resp.arrayBuffer();
}
await page.getByText('e2e-live', { exact: false }).first().waitFor();
await shot('23b-logs-live');

step('guardrails: a profile, a rule checked as it is typed, the tester, a request blocked');
currentPage = 'admin: Guardrails';
await page.getByRole('navigation').getByRole('link', { name: 'Guardrails', exact: true }).click();
await page.getByRole('button', { name: 'New profile' }).click();
{
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('content filter');
  await dialog.getByLabel('Guardrail id').fill('e2eguard1');
  await dialog.getByLabel('Access key id').fill('AKIDSIMGUARDRAIL');
  await dialog.getByLabel('Secret access key').fill('sim-guardrail-secret-key');
  await dialog.getByRole('button', { name: 'Create profile' }).click();
  await dialog.waitFor({ state: 'detached' });
}
await page.getByRole('cell', { name: 'content filter', exact: true }).waitFor();
await page.getByRole('button', { name: 'New rule' }).click();
{
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('claude traffic');
  await dialog.getByLabel('When (CEL expression)').fill('request.model.startsWith("claude") && request.temprature > 1');
  await dialog.getByText(/no field 'temprature'/).waitFor();
  await shot('22b-guardrails-rule-invalid', false);
  await dialog.getByLabel('When (CEL expression)').fill('request.model.startsWith("claude")');
  await dialog.getByText('valid expression').waitFor();
  await dialog.getByLabel('content filter').check();
  await dialog.getByRole('button', { name: 'Create rule' }).click();
  await dialog.waitFor({ state: 'detached' });
}
await page.getByRole('cell', { name: 'claude traffic', exact: true }).waitFor();
await page.getByLabel('Text', { exact: true }).fill('hello\nsim: guardrail content type=HATE');
await page.getByRole('button', { name: 'Run the profile' }).click();
await page.getByText('blocked', { exact: true }).waitFor();
await shot('22c-guardrails-tested');
{
  const resp = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4.5', messages: [{ role: 'user', content: 'hello\nsim: guardrail content type=HATE' }] }),
  });
  const body = await resp.json();
  if (resp.status !== 403 || body.error?.type !== 'guardrail_blocked' || body.error?.violations?.[0]?.name !== 'HATE') {
    throw new Error(`a guarded request: ${resp.status} ${JSON.stringify(body)}`);
  }
}

step('models: populate, disable one, /v1 refuses it, enable it again');
currentPage = 'admin: Models';
await page.getByRole('navigation').getByRole('link', { name: 'Models', exact: true }).click();
await page.getByRole('button', { name: 'Populate from providers' }).click();
await page.getByText(/\d+ added, \d+ updated/).first().waitFor();
await page.locator('#model-provider').selectOption('primary');
await page.getByLabel('Filter models').fill('claude-haiku-4.5');
await page.getByRole('switch', { name: 'Disable claude-haiku-4.5' }).click();
await page.getByRole('switch', { name: 'Enable claude-haiku-4.5' }).waitFor();
await shot('20b-models-disabled');
{
  const resp = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'primary/claude-haiku-4.5', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = await resp.json();
  if (resp.status !== 403 || body.error?.type !== 'model_disabled') {
    throw new Error(`a disabled model on /v1: ${resp.status} ${JSON.stringify(body)}`);
  }
}
await page.getByRole('switch', { name: 'Enable claude-haiku-4.5' }).click();
await page.getByRole('switch', { name: 'Disable claude-haiku-4.5' }).waitFor();
await v1Chat(key, 'primary/claude-haiku-4.5');

step('a hot setting changed and applied');
await page.getByRole('navigation').getByRole('link', { name: 'Configuration', exact: true }).click();
const retries = page.getByLabel('http_max_retries', { exact: true });
await retries.fill('2');
await page.getByRole('button', { name: 'Save 1 change' }).click();
await page.getByText(/Applied now: http_max_retries/).waitFor();
await shot('19b-config-applied');
{
  const cfg = await page.evaluate(async () => (await fetch('/_ui/api/config')).json());
  if (cfg.values.http_max_retries !== '2' || cfg.sources.http_max_retries !== 'database') {
    throw new Error(`the saved setting: ${JSON.stringify([cfg.values.http_max_retries, cfg.sources.http_max_retries])}`);
  }
}

step('create user, sign out, sign in');
await page.getByRole('navigation').getByRole('link', { name: 'Users', exact: true }).click();
await page.getByRole('button', { name: 'Create user' }).click();
await page.getByRole('dialog').getByLabel('Email').fill('bob@example.com');
await page.getByRole('dialog').getByLabel('Temporary password').fill('temporary password 1');
await shot('25-create-user', false);
await page.getByRole('dialog').getByRole('button', { name: 'Create user' }).click();
await page.getByRole('link', { name: 'bob@example.com' }).waitFor();
await page.getByRole('button', { name: 'Sign out' }).click();
await page.waitForURL('**/_ui/login');
await shot('26-login');
await page.getByLabel('Email').fill(ADMIN);
await page.getByLabel('Password').fill(PW);
await page.getByRole('button', { name: 'Sign in' }).click();
await page.getByLabel('Authentication code').waitFor();
await shot('27-login-2fa');
await page.waitForTimeout(31000); // the step of the enrollment code was used
await page.getByLabel('Authentication code').fill(totp(secret));
await page.getByRole('button', { name: 'Verify' }).click();
await page.waitForURL(/\/_ui\/?$/);
await page.getByRole('button', { name: 'Sign out' }).click();
await page.waitForURL('**/_ui/login');

step('bob: forced password change, 2FA, not allowed');
await page.getByLabel('Email').fill('bob@example.com');
await page.getByLabel('Password').fill('temporary password 1');
await page.getByRole('button', { name: 'Sign in' }).click();
await page.waitForURL('**/_ui/change-password');
await shot('28-forced-password');
await page.getByLabel('Temporary password').fill('temporary password 1');
await page.getByLabel('New password', { exact: true }).fill('bob has a new password');
await page.getByLabel('Repeat the new password').fill('bob has a new password');
await page.getByRole('button', { name: 'Change password' }).click();
await page.waitForURL('**/_ui/setup-2fa');
secret = (await page.getByLabel('TOTP secret').textContent()).replace(/\s/g, '');
await page.getByLabel('Code from the app').fill(totp(secret));
await page.getByRole('button', { name: 'Verify and turn on' }).click();
await page.getByLabel('I have saved my recovery codes').check();
await page.getByRole('button', { name: 'Continue to the console' }).click();
await page.waitForURL(/\/_ui\/?$/);
await page.waitForTimeout(800);
await shot('29-user-overview');
await page.goto(`${BASE}/_ui/admin/users`);
await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
await shot('30-not-allowed');

step('lockout');
await page.getByRole('button', { name: 'Sign out' }).click();
await page.waitForURL('**/_ui/login');
for (let i = 0; i < 5; i++) {
  await page.getByLabel('Email').fill('bob@example.com');
  await page.getByLabel('Password').fill('wrong password here');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForTimeout(700);
}
await shot('31-lockout');

const perPage = {};
for (const c of apiCalls) (perPage[c.page] ??= []).push(c.call);
const idle = apiCalls.filter((c) => c.page.startsWith('overview, left open'));
const idleByCall = {};
for (const c of idle) idleByCall[c.call] = (idleByCall[c.call] ?? 0) + 1;
const figures = { firstRenderMs: firstRender, navigation: nav, apiCallsPerPage: Object.fromEntries(Object.entries(perPage).map(([k, v]) => [k, v.length])), overviewOpen15s: idleByCall };
writeFileSync(join(OUT, 'figures.json'), JSON.stringify({ ...figures, calls: perPage }, null, 2));
console.log('figures:', JSON.stringify(figures));
for (const [call, n] of Object.entries(idleByCall)) {
  if (n > 4) axeViolations.push(`polling: ${call} was called ${n} times in 15 s on an open page (at most once every 5 s)`);
}
console.log('screenshots in', OUT);
const jsErrors = errors.filter((e) => !e.startsWith('Failed to load resource'));
console.log('page errors:', jsErrors.length ? jsErrors : 'none');
console.log('accessibility (serious, critical) and polling:', axeViolations.length ? axeViolations : 'none');
if (jsErrors.length || axeViolations.length) process.exitCode = 1;
await browser.close();
