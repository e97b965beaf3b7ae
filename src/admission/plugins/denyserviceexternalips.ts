// DenyServiceExternalIPs: no new external IPs on services (an address a
// service claims is traffic it can capture). A create with any, or an update
// that adds one, is refused with 403; existing ones stay and may be removed.

import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';

const externalIPs = (service: Record<string, any> | undefined): unknown[] => (Array.isArray(service?.spec?.externalIPs) ? service!.spec.externalIPs : []);

export class DenyServiceExternalIPs implements AdmissionPlugin {
  readonly name = 'DenyServiceExternalIPs';

  validate(r: AdmissionRequest): void {
    if (r.kind.group !== '' || r.kind.plural !== 'services' || (r.subresource ?? '') !== '') return;
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    const wanted = externalIPs(r.object);
    if (wanted.length === 0) return;
    const had = new Set(r.operation === 'UPDATE' ? externalIPs(r.oldObject) : []);
    if (r.operation === 'UPDATE' && wanted.every((ip) => had.has(ip))) return;
    throw forbiddenRequest(r, 'Use of external IPs is denied by admission control');
  }
}
