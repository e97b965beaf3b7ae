// The 409 an apply answers when it would change fields other managers own:
// one cause per conflicting field naming its manager, and upstream's message.

import { ApiError, type StatusCause } from '../errors.js';
import { printManager } from './entries.js';
import type { FieldSet } from './fieldset.js';
import { compareStrings, pathString } from './pathelement.js';

export function conflictError(conflicts: Map<string, FieldSet>): ApiError {
  const managers = [...conflicts.keys()].sort(compareStrings);
  const all: Array<{ manager: string; path: string }> = [];
  for (const m of managers) for (const p of conflicts.get(m)!.paths()) all.push({ manager: m, path: pathString(p) });
  const causes: StatusCause[] = all.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: c.path,
  }));
  let message: string;
  if (all.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(all[0].manager)}: ${all[0].path}`;
  } else {
    const lines: string[] = [];
    for (const m of managers) {
      lines.push(`conflicts with ${printManager(m)}:`);
      for (const c of all) if (c.manager === m) lines.push(`- ${c.path}`);
    }
    message = `Apply failed with ${all.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}
