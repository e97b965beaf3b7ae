// The chain: every mutating plugin before any validating one, in the order
// given; the first rejection ends the phase; a second mutating round when a
// plugin asks for it; plugins that reserved something give it back when a
// later plugin rejects; every phase and plugin is timed in the metrics.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { AdmissionChain } from '../../../src/admission/chain.js';
import { AdmissionMetrics } from '../../../src/admission/metrics.js';
import type { AdmissionPlugin, AdmissionRequest, MutationRound } from '../../../src/admission/types.js';
import { configMaps } from '../../../src/api/core/v1/index.js';
import { errors } from '../../../src/machinery/errors.js';
import { admissionRequest, rejection } from '../../support/admission.js';

function recorder(name: string, log: string[], behaviour: { rejectIn?: 'mutate' | 'validate'; release?: boolean } = {}): AdmissionPlugin {
  const plugin: AdmissionPlugin = {
    name,
    mutate: () => {
      log.push(`${name}.mutate`);
      if (behaviour.rejectIn === 'mutate') throw errors.badRequest(`${name} says no`);
    },
    validate: () => {
      log.push(`${name}.validate`);
      if (behaviour.rejectIn === 'validate') throw errors.badRequest(`${name} says no`);
    },
  };
  if (behaviour.release) plugin.release = () => { log.push(`${name}.release`); };
  return plugin;
}

const create = () => admissionRequest('CREATE', configMaps, 'cm', { namespace: 'default' });

describe('AdmissionChain', () => {
  test('mutating plugins run in order, then validating ones', async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([recorder('a', log), recorder('b', log)]);
    const r = create();
    await chain.mutate(r);
    await chain.validate(r);
    assert.deepEqual(log, ['a.mutate', 'b.mutate', 'a.validate', 'b.validate']);
  });

  test('the first rejection ends the phase with that plugin\'s error', async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([recorder('a', log), recorder('b', log, { rejectIn: 'mutate' }), recorder('c', log)]);
    const e = await rejection(chain.mutate(create()));
    assert.equal(e.message, 'b says no');
    assert.deepEqual(log, ['a.mutate', 'b.mutate']);
  });

  test('a plugin that asks for reinvocation gets a second round of every mutating plugin, and only one', async () => {
    const rounds: boolean[] = [];
    const asker: AdmissionPlugin = {
      name: 'asker',
      mutate: (_r: AdmissionRequest, round: MutationRound) => {
        rounds.push(round.reinvoke);
        const state = round.state('asker', () => ({ calls: 0 }));
        state.calls++;
        round.requestReinvocation(); // asked in both rounds; the second ask is ignored
      },
    };
    const log: string[] = [];
    const chain = new AdmissionChain([recorder('first', log), asker]);
    await chain.mutate(create());
    assert.deepEqual(rounds, [false, true]);
    assert.deepEqual(log, ['first.mutate', 'first.mutate']);
  });

  test('reserving plugins give back in reverse order when a later plugin rejects, once', async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([recorder('quota', log, { release: true }), recorder('other', log, { release: true }), recorder('deny', log, { rejectIn: 'validate' })]);
    const r = create();
    await chain.mutate(r);
    await rejection(chain.validate(r));
    assert.deepEqual(log, ['quota.mutate', 'other.mutate', 'deny.mutate', 'quota.validate', 'other.validate', 'deny.validate', 'other.release', 'quota.release']);
    await chain.abandon(r);
    assert.equal(log.filter((l) => l.endsWith('.release')).length, 2, 'released once');
  });

  test('plugins that answer at once and plugins that answer a promise keep their order; a rejected promise ends the phase and what each admitted plugin reserved (in either phase) is given back', async () => {
    const log: string[] = [];
    const later = (name: string, rejectIn?: 'validate'): AdmissionPlugin => ({
      name,
      mutate: async () => { await new Promise((r) => setImmediate(r)); log.push(`${name}.mutate`); },
      validate: async () => {
        await new Promise((r) => setImmediate(r));
        log.push(`${name}.validate`);
        if (rejectIn) throw errors.badRequest(`${name} says no`);
      },
      release: () => { log.push(`${name}.release`); },
    });
    const registry = new Registry();
    const chain = new AdmissionChain([recorder('a', log, { release: true }), later('b'), recorder('c', log), later('d', 'validate'), recorder('e', log)], { metrics: new AdmissionMetrics(registry) });
    const r = create();
    await chain.mutate(r);
    const err = await rejection(chain.validate(r));
    assert.match(err.message, /d says no/);
    assert.deepEqual(log, ['a.mutate', 'b.mutate', 'c.mutate', 'd.mutate', 'e.mutate', 'a.validate', 'b.validate', 'c.validate', 'd.validate', 'd.release', 'b.release', 'a.release']);
    const text = await registry.metrics();
    assert.match(text, /apiserver_admission_controller_admission_duration_seconds_count\{name="d",type="validate",operation="CREATE",rejected="true"\} 1/);
    assert.match(text, /apiserver_admission_controller_admission_duration_seconds_count\{name="b",type="admit",operation="CREATE",rejected="false"\} 1/);
  });

  test('a failure after admission releases through abandon; a failing release is logged, not thrown', async () => {
    const logged: string[] = [];
    const reserving: AdmissionPlugin = { name: 'quota', validate: () => undefined, release: () => { throw new Error('store down'); } };
    const chain = new AdmissionChain([reserving], { log: (m) => logged.push(m) });
    const r = create();
    await chain.validate(r);
    await chain.abandon(r);
    assert.deepEqual(logged, ['admission plugin quota could not release what it reserved']);
  });

  test('phases and plugins are timed, with whether they rejected', async () => {
    const registry = new Registry();
    const chain = new AdmissionChain([recorder('ok', []), recorder('deny', [], { rejectIn: 'validate' })], { metrics: new AdmissionMetrics(registry) });
    const r = create();
    await chain.mutate(r);
    await rejection(chain.validate(r));
    const text = await registry.metrics();
    assert.match(text, /apiserver_admission_step_admission_duration_seconds_count\{type="admit",operation="CREATE",rejected="false"\} 1/);
    assert.match(text, /apiserver_admission_step_admission_duration_seconds_count\{type="validate",operation="CREATE",rejected="true"\} 1/);
    assert.match(text, /apiserver_admission_controller_admission_duration_seconds_count\{name="deny",type="validate",operation="CREATE",rejected="true"\} 1/);
    assert.match(text, /apiserver_admission_controller_admission_duration_seconds_count\{name="ok",type="validate",operation="CREATE",rejected="false"\} 1/);
  });
});

describe('AdmissionChain timing', () => {
  test('each plugin is timed by one clock read where it ends: the plugins\' durations add up to their phase\'s', async () => {
    const registry = new Registry();
    const chain = new AdmissionChain([recorder('a', []), recorder('b', []), recorder('c', [])], { metrics: new AdmissionMetrics(registry) });
    const r = create();
    // A clock that moves one millisecond each time it is read.
    const realNow = performance.now;
    let ms = 0;
    performance.now = () => ++ms;
    try {
      await chain.mutate(r);
      await chain.validate(r);
    } finally {
      performance.now = realNow;
    }
    const text = await registry.metrics();
    const sum = (metric: string, labels: string) => Number(new RegExp(`${metric}_sum\\{${labels}\\} ([0-9.e-]+)`).exec(text)?.[1]);
    for (const type of ['admit', 'validate']) {
      for (const name of ['a', 'b', 'c']) {
        assert.equal(sum('apiserver_admission_controller_admission_duration_seconds', `name="${name}",type="${type}",operation="CREATE",rejected="false"`), 0.001, `${name} ${type}`);
      }
      assert.equal(sum('apiserver_admission_step_admission_duration_seconds', `type="${type}",operation="CREATE",rejected="false"`), 0.003, type);
    }
    // Four reads a phase: where it starts and where each plugin ends.
    assert.equal(ms, 8);
  });
});
