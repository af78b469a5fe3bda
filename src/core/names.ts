/**
 * Names that must be unique (topics, integrations, group and consumer refs, builders' emails) are
 * kept and compared in Unicode Normalization Form C. The same text typed precomposed (`café`,
 * U+00E9) or decomposed (`cafe` + U+0301) looks the same to a person: it is one name to Ferry too,
 * rather than two that cannot be told apart.
 */
export function canonicalName(name: string): string {
  return name.normalize('NFC');
}

/** An email address as builders and invites are matched by it: trimmed, lower case, NFC. */
export function canonicalEmail(email: string): string {
  return canonicalName(email.trim().toLowerCase());
}
