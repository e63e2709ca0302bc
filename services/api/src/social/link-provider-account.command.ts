import { ProviderTokensUpdated, streams } from '@portcullis/contracts';
import type { RequestMetadata } from '@portcullis/platform';
import type { SocialPorts } from './ports.ts';
import { activeAccountIn } from '../identity/account-model.ts';
import { linkProviderAccountIn, scopesOf, type NewProviderAccount } from '../identity/provider-accounts.ts';
import { providerAccountClaimModel } from '../identity/provider-account.decider.ts';
import type { ProviderProfile } from './provider.ts';
import type { SocialRefusal } from './sign-in-with-provider.command.ts';

export type LinkRefusal = Extract<SocialRefusal, 'unable_to_link_account' | 'email_does_not_match' | 'account_already_linked_to_different_user'>;

export interface ProviderLink {
  readonly userId: string;
  /** The user's email when the link began (better-auth's `link.email`). */
  readonly email: string;
  readonly profile: ProviderProfile;
  readonly account: NewProviderAccount;
}

/** Scopes granted before and now, once each, comma-separated (better-auth's mergeScopes). */
function mergedScope(before: string | null, now: string | null): string | null {
  const scopes = new Set([...scopesOf(before), ...scopesOf(now)]);
  return scopes.size === 0 ? null : [...scopes].join(',');
}

/**
 * link-social's end (the callback of a link flow, or an id token): the provider's account joins the signed-in
 * user only where the provider vouches for the email (verified, or a trusted provider) and it is the user's
 * own address (unless AUTH_ACCOUNT_LINKING_ALLOW_DIFFERENT_EMAILS); linked already to them, it gets the new
 * tokens and the scopes asked for now as well; someone else's is refused.
 */
export async function linkProviderAccount(ctx: SocialPorts, request: RequestMetadata, link: ProviderLink): Promise<LinkRefusal | null> {
  const { providerId, providerAccountId } = link.account;
  const trusted = ctx.config.social.trustedProviders.includes(providerId);
  if (!trusted && !link.profile.emailVerified) return 'unable_to_link_account';
  if (link.profile.email?.toLowerCase() !== link.email.toLowerCase() && !ctx.config.social.allowDifferentEmails) return 'email_does_not_match';
  const { result } = await ctx.commands.handle(
    { name: 'link-social', request, actorId: link.userId, serialize: [streams.providerAccount(providerId, providerAccountId)] },
    async (unit): Promise<LinkRefusal | null> => {
      const user = await activeAccountIn(unit, link.userId);
      const claim = await unit.load(streams.providerAccount(providerId, providerAccountId), providerAccountClaimModel);
      if (claim.state.status === 'claimed') {
        if (claim.state.userId !== link.userId) return 'account_already_linked_to_different_user';
        const held = user.state.accounts.find((account) => account.accountId === (claim.state as { accountId: string }).accountId);
        unit.append(user.streamId, [
          ProviderTokensUpdated({ userId: link.userId, accountId: claim.state.accountId, providerId, ...link.account.tokens, scope: mergedScope(held?.scope ?? null, link.account.scope) }),
        ]);
        return null;
      }
      const linked = await linkProviderAccountIn(unit, link.userId, link.account);
      if (linked.outcome !== 'linked') return 'account_already_linked_to_different_user';
      unit.append(user.streamId, linked.userEvents);
      return null;
    },
  );
  return result;
}
