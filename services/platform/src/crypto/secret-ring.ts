/**
 * The secrets a process holds, newest first (`config.secrets`): the newest signs, seals and wraps; every
 * one is accepted when reading, so what an older one produced stays valid while it is in the ring. A bare
 * string is a ring of one.
 */
export type SecretRing = string | readonly string[];

export function secretsOf(ring: SecretRing): readonly string[] {
  const secrets = typeof ring === 'string' ? [ring] : ring;
  if (secrets.length === 0) throw new TypeError('a secret ring needs at least one secret');
  return secrets;
}
