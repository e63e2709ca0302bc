import { DomainError } from '@portcullis/contracts';
import { signEmailVerificationToken, type RequestMetadata } from '@portcullis/platform';
import type { AccountPorts } from './ports.ts';
import { withMinimumDuration } from '../http/equal-timing.ts';
import { accountByEmailIn, activeAccountIn, queueVerificationMail } from '../identity/account-model.ts';

/** better-auth's floor on send-verification-email for callers without a session. */
const UNAUTHENTICATED_FLOOR_MS = 500;

/**
 * send-verification-email: a verification link to the address. Signed in, it must be the caller's own,
 * unverified address. Anyone may ask for any address: then the answer and its timing must not tell whether
 * the address has an unverified account (the same signing work for none, and a floor).
 */
export async function sendVerificationEmail(
  ports: Pick<AccountPorts, 'commands' | 'config'>,
  request: RequestMetadata,
  command: {
    readonly email: string;
    readonly callbackURL: string | undefined;
    readonly signedIn: { readonly userId: string; readonly email: string; readonly emailVerified: boolean } | null;
  },
): Promise<void> {
  const { email, callbackURL, signedIn } = command;
  const options = { name: 'send-verification-email', request, actorId: signedIn?.userId ?? null };
  if (!signedIn) {
    await withMinimumDuration(UNAUTHENTICATED_FLOOR_MS, () =>
      ports.commands.handle(options, async (unit) => {
        const account = await accountByEmailIn(unit, email);
        if (account && !account.state.emailVerified) {
          await queueVerificationMail(unit, ports, account.state, callbackURL);
          return;
        }
        await signEmailVerificationToken({ email }, ports.config.secret, ports.config.emailVerification.expiresInSeconds, unit.now);
      }),
    );
    return;
  }
  if (signedIn.email.toLowerCase() !== email) throw new DomainError('EMAIL_MISMATCH');
  if (signedIn.emailVerified) throw new DomainError('EMAIL_ALREADY_VERIFIED');
  await ports.commands.handle(options, async (unit) => {
    const account = await activeAccountIn(unit, signedIn.userId);
    await queueVerificationMail(unit, ports, account.state, callbackURL);
  });
}
