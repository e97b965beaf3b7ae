/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339Now(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microsecond precision, as metav1.MicroTime serialises. */
export function rfc3339MicroNow(date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
