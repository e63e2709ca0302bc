import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { parseEd25519PrivateKey } from '../crypto/ed25519.ts';
import { section, setting } from './settings.ts';

/** The audit trail: the key its exported log heads are signed with. */
export const auditSettings = section(
  'Audit trail',
  {
    AUDIT_SIGNING_KEY: setting(
      z
        .string()
        .optional()
        .transform((value, context): KeyObject | null => {
          if (value === undefined) return null;
          try {
            return parseEd25519PrivateKey(value);
          } catch {
            // Never the value: it is a private key.
            context.addIssue({ code: 'custom', message: 'must be an Ed25519 PKCS#8 PEM or a 32-byte seed in base64 or hex' });
            return z.NEVER;
          }
        }),
      'Ed25519 private key (PKCS#8 PEM, or a 32-byte seed in base64 or hex: `openssl rand -base64 32`) that signs the log heads `audit head` exports, so a cut or rewritten tail is detected; without it heads are exported unsigned',
    ),
  },
  (c) => ({ audit: { signingKey: c.AUDIT_SIGNING_KEY } }),
);
