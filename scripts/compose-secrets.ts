import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The secret files docker-compose.yml mounts, made once with random values. An existing file is kept: the
 * database's password is set when its volume is first made, and a new AUTH_SECRET would sign every user out.
 */
const directory = fileURLToPath(new URL('../deploy/compose/secrets/', import.meta.url));
const postgresPassword = randomBytes(24).toString('hex');

const secrets: Record<string, () => string> = {
  auth_secret: () => randomBytes(48).toString('base64url'),
  auth_server_api_key: () => randomBytes(32).toString('base64url'),
  postgres_password: () => postgresPassword,
  database_url: () => `postgres://portcullis:${postgresPassword}@postgres:5432/portcullis`,
  // An Ed25519 seed (AUDIT_SIGNING_KEY accepts 32 bytes in base64).
  audit_signing_key: () => randomBytes(32).toString('base64'),
};

if (existsSync(`${directory}postgres_password`) !== existsSync(`${directory}database_url`)) {
  throw new Error(`${directory}: postgres_password and database_url must be made together; remove both to make them again`);
}
// The folder keeps them from other users of this machine; the files themselves must stay readable by the
// containers' own user, since compose mounts each as it is.
chmodSync(directory, 0o700);
for (const [name, make] of Object.entries(secrets)) {
  const path = `${directory}${name}`;
  if (existsSync(path)) {
    console.log(`kept ${path}`);
    continue;
  }
  writeFileSync(path, make(), { mode: 0o644 });
  console.log(`made ${path}`);
}
