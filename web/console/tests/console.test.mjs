// The console's browser test: start a broker, write records with the CLI,
// commit a group's offsets, then drive the console in headless Chromium
// (overview → topic → records → group) and check what it shows against
// what Kafka clients read back; a second broker, "east", is the source of
// a [mirror.east] link whose lag the mirrors page must show; a share group
// member (gregor consume --share-group) accepts some records and the share
// group's page must show where its share-partition stands. Screenshots go
// to $SCREENSHOTS (default
// web/console/test-results).
//
//   node tests/console.test.mjs [path/to/gregor]
//
// CHROMIUM overrides the browser (default /usr/bin/chromium).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const gregor = resolve(process.argv[2] || join(repo, 'bin/gregor'));
const shots = resolve(process.env.SCREENSHOTS || join(here, '../test-results'));
const started = Date.now();

function log(...a) { console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a); }

function fail(msg) { throw new Error(msg); }

function check(cond, msg) { if (!cond) fail(msg); }

async function freePort() {
  return new Promise((ok, bad) => {
    const s = createServer();
    s.on('error', bad);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); });
  });
}

function cli(bootstrap, args, input) {
  return execFileSync(gregor, [...args, '--bootstrap', bootstrap], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

async function waitHealthy(base, broker) {
  for (let i = 0; i < 300; i++) {
    if (broker.exitCode !== null) fail(`broker exited with ${broker.exitCode}`);
    try {
      const r = await fetch(base + '/healthz');
      if (r.ok) return;
    } catch { /* not yet listening */ }
    await new Promise(r => setTimeout(r, 100));
  }
  fail('broker did not become healthy in 30 s');
}

async function api(base, path) {
  const r = await fetch(base + '/api/v1' + path);
  if (!r.ok) fail(`GET ${path}: ${r.status}`);
  return r.json();
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'gregor-console-'));
  const [kport, hport, ekport, ehport] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const bootstrap = `127.0.0.1:${kport}`;
  const base = `http://127.0.0.1:${hport}`;
  const eastBootstrap = `127.0.0.1:${ekport}`;
  writeFileSync(join(dir, 'east.toml'), `node_id = 1
data_dir = "${join(dir, 'east')}"
[listeners]
kafka = "${eastBootstrap}"
http = "127.0.0.1:${ehport}"
[log]
durability = "page_cache"
`);
  writeFileSync(join(dir, 'broker.toml'), `node_id = 1
data_dir = "${join(dir, 'data')}"
[listeners]
kafka = "${bootstrap}"
http = "127.0.0.1:${hport}"
[log]
durability = "page_cache"
[mirror.east.source]
name = "east"
bootstrap = ["${eastBootstrap}"]
[mirror.east.target]
name = "local"
[mirror.east.topics]
include = ["shipments"]
[mirror.east.mirror]
refresh_interval_ms = 200
`);
  const east = spawn(gregor, ['serve', '--config', join(dir, 'east.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  east.stderr.on('data', () => {});
  const broker = spawn(gregor, ['serve', '--config', join(dir, 'broker.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let brokerLog = '';
  broker.stderr.on('data', d => { brokerLog += d; });
  let browser;
  try {
    await waitHealthy(`http://127.0.0.1:${ehport}`, east);
    await waitHealthy(base, broker);
    log('broker up at', bootstrap, base, 'mirroring from', eastBootstrap);

    // Seed: 24 keyed JSON orders over 3 partitions, 5 text payments.
    cli(bootstrap, ['topic', 'create', 'orders', '--partitions', '3']);
    cli(bootstrap, ['topic', 'create', 'payments', '--partitions', '1']);
    const lines = [];
    for (let i = 0; i < 24; i++) {
      const c = `customer-${String(i % 8).padStart(2, '0')}`;
      lines.push(`${c}|${JSON.stringify({ order: i, customer: c, amount: 10 + i })}`);
    }
    cli(bootstrap, ['produce', 'orders', '--key-separator', '|', '--header', 'source=console-test'], lines.join('\n') + '\n');
    cli(bootstrap, ['produce', 'payments'], ['paid 1', 'paid 2', 'paid 3', 'refund 1', 'paid 4'].join('\n') + '\n');
    // What a Kafka client reads back is the truth the console must show.
    const consumed = cli(bootstrap, ['consume', 'orders', '--count', '24', '--timeout', '10s', '--format', 'json', '--quiet'])
      .trim().split('\n').map(l => JSON.parse(l));
    check(consumed.length === 24, `consumed ${consumed.length} orders, want 24`);
    const byPartition = [0, 1, 2].map(p => consumed.filter(r => r.partition === p).sort((a, b) => a.offset - b.offset));
    // The group "billing" has read the first 2 records of every partition.
    cli(bootstrap, ['group', 'reset-offsets', 'billing', '--topic', 'orders', '--to-offset', '2', '--execute']);
    const wantLag = byPartition.reduce((n, rs) => n + Math.max(0, rs.length - 2), 0);
    log('seeded: orders per partition', byPartition.map(r => r.length).join('/'), 'billing lag', wantLag);

    mkdirSync(shots, { recursive: true });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    const consoleErrors = [];
    page.on('pageerror', e => consoleErrors.push(e.message));
    page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    const external = [];
    page.on('request', r => { if (!r.url().startsWith(base)) external.push(r.url()); });

    // Overview.
    const cluster = await api(base, '/cluster');
    await page.goto(base + '/');
    await page.getByTestId('overview').waitFor();
    const heading = await page.locator('h1').first().innerText();
    check(heading.includes(cluster.cluster_id), `overview heading "${heading}" lacks the cluster id ${cluster.cluster_id}`);
    const brokers = await page.getByTestId('brokers').locator('tbody tr').count();
    check(brokers === 1, `overview shows ${brokers} brokers, want 1`);
    check(await page.getByTestId('health-ok').isVisible(), 'overview does not report healthy partitions');
    await page.screenshot({ path: join(shots, '1-overview.png'), fullPage: true });
    log('overview ok');

    // Topics list → orders.
    await page.getByRole('link', { name: 'Topics', exact: true }).click();
    const row = page.getByTestId('topics').locator('tr', { has: page.locator('a[data-topic="orders"]') });
    await row.waitFor();
    const rowText = await row.innerText();
    check(rowText.includes('24'), `topics row for orders "${rowText}" lacks 24 records`);
    await row.locator('a[data-topic="orders"]').click();
    await page.getByTestId('topic').waitFor();
    const hws = await page.getByTestId('partitions').locator('tbody tr').evaluateAll(trs => trs.map(tr => tr.children[6].innerText));
    check(JSON.stringify(hws) === JSON.stringify(byPartition.map(r => String(r.length))),
      `high watermarks ${hws} differ from records consumed per partition ${byPartition.map(r => r.length)}`);
    await page.screenshot({ path: join(shots, '2-topic.png'), fullPage: true });
    log('topic ok');

    // Produce a test record from the topic page.
    await page.getByLabel('key').fill('console-key');
    await page.getByLabel('value').fill('{"from":"console"}');
    await page.getByTestId('produce').getByLabel('partition').selectOption('1');
    await page.getByRole('button', { name: 'Produce' }).click();
    const result = page.getByTestId('produce-result');
    await result.filter({ hasText: 'Written to partition 1' }).waitFor();
    const producedAt = Number((await result.innerText()).match(/offset (\d+)/)[1]);
    check(producedAt === byPartition[1].length, `test record at offset ${producedAt}, want ${byPartition[1].length}`);
    log('produce ok at 1 /', producedAt);

    // Records of partition 0 from offset 0.
    await page.locator('a[data-records="0"]').click();
    await page.getByTestId('records').waitFor();
    await page.getByTestId('offset-input').fill('0');
    await page.getByTestId('jump-offset').click();
    await page.locator('tr[data-offset="0"]').waitFor();
    const shown = await page.getByTestId('record-table').locator('tbody tr').evaluateAll(trs => trs.map(tr => ({
      offset: Number(tr.dataset.offset), key: tr.children[2].innerText, value: tr.children[3].innerText, headers: tr.children[4].innerText,
    })));
    check(shown.length === byPartition[0].length, `records page shows ${shown.length} records, want ${byPartition[0].length}`);
    shown.forEach((s, i) => {
      const want = byPartition[0][i];
      check(s.offset === want.offset && s.key === want.key, `record ${i}: offset ${s.offset} key ${s.key}, want ${want.offset} ${want.key}`);
      check(JSON.stringify(JSON.parse(s.value)) === JSON.stringify(JSON.parse(want.value)), `record ${i}: value ${s.value}, want ${want.value}`);
      check(s.value.includes('\n  "order"'), `record ${i}: value is not pretty-printed JSON: ${s.value}`);
      check(s.headers.includes('source = console-test'), `record ${i}: headers "${s.headers}"`);
    });
    await page.screenshot({ path: join(shots, '3-records.png'), fullPage: true });
    // Hex decoding and jumping to an offset.
    await page.getByTestId('decode-select').selectOption('hex');
    await page.locator('pre.value.hex').first().waitFor();
    const firstHex = await page.locator('tbody tr').first().locator('pre').innerText();
    check(firstHex.startsWith('7b 22'), `hex value starts "${firstHex.slice(0, 8)}", want 7b 22 ({")`);
    await page.getByTestId('offset-input').fill('3');
    await page.getByTestId('jump-offset').click();
    await page.locator('tbody tr').first().and(page.locator('tr[data-offset="3"]')).waitFor();
    // The produced test record is on partition 1.
    await page.getByTestId('decode-select').selectOption('auto');
    await page.locator('pre.value.json').first().waitFor();
    await page.getByTestId('partition-select').selectOption('1');
    await page.locator(`tr[data-offset="${producedAt}"]`).waitFor();
    const testRec = await page.locator(`tr[data-offset="${producedAt}"]`).innerText();
    check(testRec.includes('console-key') && testRec.includes('"from": "console"'), `test record row "${testRec}"`);
    log('records ok');

    // Groups → billing, with lag per partition and the lag chart.
    await page.getByRole('link', { name: 'Groups', exact: true }).click();
    await page.locator('a[data-group="billing"]').click();
    await page.getByTestId('group').waitFor();
    const lags = await page.getByTestId('group-offsets').locator('tbody tr').evaluateAll(trs => trs.map(tr => ({
      partition: Number(tr.children[1].innerText), committed: tr.children[2].innerText, lag: tr.children[4].innerText,
    })));
    check(lags.length === 3, `group shows ${lags.length} partitions, want 3`);
    for (const l of lags) {
      const want = Math.max(0, byPartition[l.partition].length + (l.partition === 1 ? 1 : 0) - 2);
      check(l.committed === '2' && l.lag === String(want), `partition ${l.partition}: committed ${l.committed} lag ${l.lag}, want 2 and ${want}`);
    }
    // The broker samples lag every 10 s: after the first sample, more
    // orders arrive, so the chart's second sample is higher.
    const samples = async n => {
      for (let i = 0; i < 30; i++) {
        const g = await api(base, '/groups/billing');
        if (g.lag_history.length >= n) return g.lag_history;
        await new Promise(r => setTimeout(r, 500));
      }
      fail(`fewer than ${n} lag samples after 15 s`);
    };
    const first = (await samples(1))[0].lag;
    check(first === wantLag + 1, `first lag sample ${first}, want ${wantLag + 1}`);
    cli(bootstrap, ['produce', 'orders', '--key-separator', '|'], Array.from({ length: 12 }, (_, i) => `late-${i}|{"late":${i}}`).join('\n') + '\n');
    const hist = await samples(2);
    check(hist[1].lag === first + 12, `second lag sample ${hist[1].lag}, want ${first + 12}`);
    await page.reload();
    await page.getByTestId('lag-chart').waitFor({ timeout: 5000 });
    const points = await page.locator('svg.chart circle').count();
    check(points >= 2, `lag chart has ${points} points`);
    await page.screenshot({ path: join(shots, '4-group.png'), fullPage: true });
    log('group ok');

    // Mirrors: 7 shipments on east reach "east.shipments" here; the link
    // shows lag until they do, then 0.
    cli(eastBootstrap, ['topic', 'create', 'shipments', '--partitions', '2']);
    cli(eastBootstrap, ['produce', 'shipments'], Array.from({ length: 7 }, (_, i) => `parcel-${i}`).join('\n') + '\n');
    let link;
    for (let i = 0; i < 100; i++) {
      link = (await api(base, '/mirrors')).links[0];
      if (link && link.lag_records === 0 && link.topics.includes('shipments') && link.partitions.length === 2) break;
      await new Promise(r => setTimeout(r, 200));
    }
    check(link && link.lag_records === 0 && link.topics.includes('shipments'), `mirror link did not catch up: ${JSON.stringify(link)}`);
    const mirrored = cli(bootstrap, ['consume', 'east.shipments', '--count', '7', '--timeout', '10s', '--quiet']).trim().split('\n').sort();
    check(mirrored.length === 7 && mirrored[0] === 'parcel-0', `east.shipments holds ${mirrored.join(',')}`);
    await page.getByRole('link', { name: 'Mirrors', exact: true }).click();
    const mrow = page.getByTestId('mirrors').locator('tbody tr').first();
    await mrow.waitFor();
    const mtext = await mrow.innerText();
    for (const want of ['east', 'shipments', 'running']) check(mtext.includes(want), `mirrors row "${mtext}" lacks ${want}`);
    await page.screenshot({ path: join(shots, '5-mirrors.png'), fullPage: true });
    log('mirrors ok');

    // A share group: a `gregor consume --share-group` member reads 5 of 8
    // picks and accepts them, the other 3 go back to the group when it
    // leaves; the group page shows the share-partition's start offset 5,
    // 3 records in flight and a lag of 3.
    cli(bootstrap, ['topic', 'create', 'picks', '--partitions', '1']);
    const member = spawn(gregor, ['consume', 'picks', '--share-group', 'pickers', '--count', '5', '--timeout', '30s', '--quiet',
      '--bootstrap', bootstrap], { stdio: ['ignore', 'pipe', 'pipe'] });
    let picked = '', memberErr = '';
    member.stdout.on('data', d => { picked += d; });
    member.stderr.on('data', d => { memberErr += d; });
    const memberExit = new Promise(r => member.exitCode !== null ? r(member.exitCode) : member.on('exit', r));
    // A share group starts at the log end (share.auto.offset.reset=latest):
    // the picks are written once the member holds the share-partition.
    const shareGroup = async (what, cond) => {
      for (let i = 0; i < 200; i++) {
        const r = await fetch(base + '/api/v1/groups/pickers');
        if (r.ok) {
          const g = await r.json();
          if (cond(g)) return g;
        }
        if (member.exitCode !== null && what === 'a share-partition at offset 0') fail(`the share group member exited: ${memberErr}`);
        await new Promise(r => setTimeout(r, 200));
      }
      fail(`share group pickers: no ${what} in 40 s`);
    };
    await shareGroup('a share-partition at offset 0', g => g.type === 'share' && g.offsets.some(o => o.start_offset === 0));
    cli(bootstrap, ['produce', 'picks'], Array.from({ length: 8 }, (_, i) => `pick-${i}`).join('\n') + '\n');
    const code = await memberExit;
    const picks = picked.trim().split('\n');
    check(code === 0 && picks.length === 5 && new Set(picks).size === 5 && picks.every(p => /^pick-[0-7]$/.test(p)),
      `share group member exited ${code} after printing ${JSON.stringify(picks)}: ${memberErr}`);
    await shareGroup('start offset 5 with nothing acquired', g => g.offsets.some(o => o.start_offset === 5 && o.acquired === 0));
    await page.getByRole('link', { name: 'Groups', exact: true }).click();
    await page.locator('a[data-group="pickers"]').click();
    await page.getByTestId('group').waitFor();
    const typeCard = await page.getByTestId('group').locator('.cards').innerText();
    check(typeCard.includes('share'), `share group cards "${typeCard}" lack the type share`);
    const srow = await page.getByTestId('group-offsets').locator('tbody tr').evaluateAll(trs => trs.map(tr => [...tr.children].map(td => td.innerText)));
    check(srow.length === 1 && srow[0][0] === 'picks' && srow[0][2] === '5' && srow[0][3] === '3' && srow[0][4] === '0' &&
      srow[0][5] === '8' && srow[0][6] === '3', `share group offsets ${JSON.stringify(srow)}, want picks 0: start 5, 3 in flight, 0 acquired, high watermark 8, lag 3`);
    await page.screenshot({ path: join(shots, '6-share-group.png'), fullPage: true });
    log('share group ok');

    for (const [nav, id] of [['Brokers', 'brokers'], ['Extensions', 'extensions'], ['Mirrors', 'mirrors']]) {
      await page.getByRole('link', { name: nav, exact: true }).click();
      await page.getByTestId(id).waitFor();
    }
    check(external.length === 0, `the console loaded from other hosts: ${external.join(', ')}`);
    check(consoleErrors.length === 0, `browser console errors: ${consoleErrors.join('; ')}`);
    log(`console test passed; screenshots in ${shots}`);
  } catch (e) {
    console.error('console test FAILED:', e.message);
    console.error('broker log tail:\n' + brokerLog.split('\n').slice(-20).join('\n'));
    process.exitCode = 1;
  } finally {
    if (browser) await browser.close();
    for (const b of [broker, east]) {
      b.kill('SIGTERM');
      await new Promise(r => b.exitCode !== null ? r() : b.on('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
