// The approval annotation of protected groups, read as upstream's
// GetAPIApprovalState and IsProtectedCommunityGroup do (their test tables),
// and the Go URL rules that decide what counts as an approval URL.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalOf, isApprovalUrl, isProtectedGroup, validateApproval } from '../../../src/api/apiextensions/approval.js';
import { product, upstreamCompat, vocabulary } from '../../../src/machinery/vocabulary.js';

const theirs = upstreamCompat.apiApprovedAnnotation;

test('protected groups: upstream\'s table, and the product\'s domain', () => {
  const table: [string, boolean][] = [
    ['k8s.io', true], ['kubernetes.io', true], ['sigs.k8s.io', true], ['sigs.kubernetes.io', true], ['different.io', false],
    [product.domain, true], [`rbac.authorization.${product.domain}`, true], [`not${product.domain}`, false], ['k8s.io.example.com', false],
  ];
  for (const [group, want] of table) assert.equal(isProtectedGroup(group), want, group);
});

test('approval states: upstream\'s table', () => {
  const table: [string, Record<string, string>, string][] = [
    ['bare unapproved', { [theirs]: 'unapproved' }, 'Bypassed'],
    ['unapproved with message', { [theirs]: 'unapproved, experimental-only' }, 'Bypassed'],
    ['mismatched case', { [theirs]: 'Unapproved' }, 'Invalid'],
    ['empty', { [theirs]: '' }, 'Missing'],
    ['missing', {}, 'Missing'],
    ['url', { [theirs]: 'https://github.com/kubernetes/kubernetes/pull/78458' }, 'Approved'],
    ['url - no scheme', { [theirs]: 'github.com/kubernetes/kubernetes/pull/78458' }, 'Invalid'],
    ['url - no host', { [theirs]: 'http:///kubernetes/kubernetes/pull/78458' }, 'Invalid'],
    ['url - just path', { [theirs]: '/' }, 'Invalid'],
    ['ours', { [vocabulary.apiApprovedAnnotation]: 'https://example.com/1' }, 'Approved'],
  ];
  for (const [name, annotations, state] of table) assert.equal(approvalOf(annotations).state, state, name);
});

test('what Go\'s url.ParseRequestURI accepts with a scheme and a host', () => {
  const table: [string, boolean][] = [
    ['https://example.com', true], ['http://example.com:8080/x?y=1', true], ['https://user:pw@example.com/x', true], ['https://[::1]:443/x', true],
    ['mailto:someone@example.com', false], ['https://exa mple.com', false], ['https://example.com:port', false], ['https://ex#ample.com', false],
    ['https://example.com/%zz', false], ['https://example.com/\n', false], ['1http://example.com', false], ['//example.com', false],
  ];
  for (const [url, want] of table) assert.equal(isApprovalUrl(url), want, url);
});

test('on update only a change of the approval\'s state is checked', () => {
  const group = 'sigs.k8s.io';
  assert.equal(validateApproval(group, {}, {}).length, 0, 'missing before and after');
  assert.equal(validateApproval(group, { [theirs]: 'bogus' }, { [theirs]: 'also bogus' }).length, 0, 'invalid before and after');
  assert.deepEqual(validateApproval(group, { [theirs]: 'bogus' }, { [theirs]: 'unapproved' }).map((e) => e.field), [`metadata.annotations[${theirs}]`]);
  assert.deepEqual(validateApproval(group, {}).map((e) => e.describe()), [
    `metadata.annotations[${vocabulary.apiApprovedAnnotation}]: Required value: protected groups must have approval annotation "${vocabulary.apiApprovedAnnotation}", see https://github.com/kubernetes/enhancements/pull/1111`,
  ]);
  assert.equal(validateApproval('example.com', {}).length, 0);
});
