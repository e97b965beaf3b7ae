import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { CounterSeries, HistogramSeries, SeriesByKey } from '../../../src/machinery/metricseries.js';

/** The same metric twice, in two registries: one fed through prom-client, one through the kept series. */
function pair<M>(make: (registry: Registry) => M): { plain: M; kept: M; expose: () => Promise<[string, string]> } {
  const [a, b] = [new Registry(), new Registry()];
  return { plain: make(a), kept: make(b), expose: async () => [await a.metrics(), await b.metrics()] };
}

const buckets = [0.005, 0.025, 0.1, 1, 2.5];

test('a kept histogram series exposes what prom-client would, beyond its buckets, after a reset and for a reused label set', async () => {
  const h = pair((r) => new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['verb', 'code'], buckets, registers: [r] }));
  const labels = { verb: 'POST', code: '201' };
  const kept = new HistogramSeries(h.kept, { ...labels });
  const values = [0.001, 0.005, 0.02, 0.3, 2.5, 7, 0, 1e-9, 0.025];
  for (const v of values) {
    h.plain.observe(labels, v);
    kept.observe(v);
  }
  assert.ok(kept.direct, 'the series is updated in place (prom-client keeps its values as this module expects)');
  let [plain, fast] = await h.expose();
  assert.equal(fast, plain);

  // A reset drops the series; the next observation makes it again.
  h.plain.reset();
  h.kept.reset();
  h.plain.observe(labels, 0.2);
  kept.observe(0.2);
  kept.observe(0.2);
  h.plain.observe(labels, 0.2);
  [plain, fast] = await h.expose();
  assert.equal(fast, plain);

  // A second holder of the same labels (a restarted queue) finds the series the first made.
  const again = new HistogramSeries(h.kept, { ...labels });
  again.observe(0.01);
  again.observe(0.01);
  h.plain.observe(labels, 0.01);
  h.plain.observe(labels, 0.01);
  assert.ok(again.direct);
  [plain, fast] = await h.expose();
  assert.equal(fast, plain);

  // What prom-client refuses is still refused.
  assert.throws(() => kept.observe(Number.NaN), TypeError);
});

test('a kept counter series exposes what prom-client would, starts at zero when asked, and refuses to go down', async () => {
  const c = pair((r) => new Counter({ name: 'c_total', help: 'c', labelNames: ['name'], registers: [r] }));
  const kept = new CounterSeries(c.kept, { name: 'queue' });
  kept.inc(0);
  c.plain.inc({ name: 'queue' }, 0);
  assert.equal(...(await c.expose()));
  for (const by of [1, 1, 5, 0.5]) {
    kept.inc(by);
    c.plain.inc({ name: 'queue' }, by);
  }
  kept.inc();
  c.plain.inc({ name: 'queue' });
  assert.ok(kept.direct);
  assert.equal(...(await c.expose()));
  assert.throws(() => kept.inc(-1));
});

test('series by key: one series per key, made from the labels the first time', async () => {
  const r = new Registry();
  const h = new Histogram({ name: 'steps', help: 's', labelNames: ['type'], buckets, registers: [r] });
  let made = 0;
  const series = new SeriesByKey((labels) => { made++; return new HistogramSeries(h, labels); });
  for (let i = 0; i < 3; i++) series.get('admit', () => ({ type: 'admit' })).observe(0.001);
  series.get('validate', () => ({ type: 'validate' })).observe(0.001);
  assert.equal(made, 2);
  const text = await r.metrics();
  assert.match(text, /steps_count\{type="admit"\} 3/);
  assert.match(text, /steps_count\{type="validate"\} 1/);
});
