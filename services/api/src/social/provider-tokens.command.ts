import { DomainError, ProviderTokensUpdated, streams } from '@portcullis/contracts';
import { loadStream, type RequestMetadata } from '@portcullis/platform';
import type { SocialPorts } from './ports.ts';
import { providerTokensModel, type HeldProviderTokens } from '../identity/provider-tokens.state.ts';
import type { ProviderTokens, SocialProvider } from './provider.ts';

/**
 * Which of the user's provider accounts: by its own id (better-auth 1.7), or by provider and the provider's
 * id; naming neither, the first (account-info without an id).
 */
export interface AccountSelection {
  readonly providerId?: string | undefined;
  readonly accountId?: string | undefined;
}

export interface SelectedTokens {
  readonly accountId: string;
  readonly tokens: HeldProviderTokens;
  readonly provider: SocialProvider;
}

/** An access token within this many milliseconds of its expiry counts as expired (better-auth's margin). */
const EXPIRY_MARGIN_MS = 5_000;

/** The selected account's tokens as the log holds them (open here, sealed there), with its provider. */
export async function selectedTokens(ctx: SocialPorts, userId: string, selection: AccountSelection): Promise<SelectedTokens> {
  const { state } = await loadStream(ctx.store, streams.user(userId), providerTokensModel);
  const found = [...state].find(([accountId, held]) =>
    selection.providerId === undefined && selection.accountId === undefined
      ? true
      : selection.providerId === undefined
      ? accountId === selection.accountId
      : held.providerId === selection.providerId &&
        (selection.accountId === undefined || selection.accountId === accountId || selection.accountId === held.providerAccountId),
  );
  if (!found) throw new DomainError('ACCOUNT_NOT_FOUND');
  const provider = ctx.socialProviders.get(found[1].providerId);
  if (!provider) throw new DomainError('PROVIDER_NOT_FOUND');
  return { accountId: found[0], tokens: found[1], provider };
}

export function accessTokenExpired(tokens: HeldProviderTokens, now: Date): boolean {
  return tokens.accessTokenExpiresAt !== null && Date.parse(tokens.accessTokenExpiresAt) - now.getTime() < EXPIRY_MARGIN_MS;
}

/**
 * Refreshes the account's tokens at the provider and keeps them: the refresh is made once, outside any
 * command (a provider may rotate its refresh token, so a retried command must not refresh twice), and what
 * it answered is appended after. A provider that sends no new refresh token keeps the old one valid.
 */
export async function refreshProviderTokens(ctx: SocialPorts, request: RequestMetadata, userId: string, selected: SelectedTokens): Promise<HeldProviderTokens> {
  const { provider, tokens, accountId } = selected;
  if (!provider.refresh) throw new DomainError('TOKEN_REFRESH_NOT_SUPPORTED');
  if (!tokens.refreshToken) throw new DomainError('REFRESH_TOKEN_NOT_FOUND');
  let fresh: ProviderTokens;
  try {
    fresh = await provider.refresh(tokens.refreshToken);
  } catch (error) {
    ctx.log.warn({ err: error, providerId: tokens.providerId }, 'provider token refresh failed');
    throw new DomainError('FAILED_TO_REFRESH_ACCESS_TOKEN', { cause: error });
  }
  const renewed: HeldProviderTokens = {
    ...tokens,
    accessToken: fresh.accessToken,
    refreshToken: fresh.refreshToken ?? tokens.refreshToken,
    idToken: fresh.idToken ?? tokens.idToken,
    accessTokenExpiresAt: fresh.accessTokenExpiresAt?.toISOString() ?? null,
    refreshTokenExpiresAt: fresh.refreshTokenExpiresAt?.toISOString() ?? tokens.refreshTokenExpiresAt,
  };
  await ctx.commands.handle({ name: 'refresh-token', request, actorId: userId, serialize: [streams.user(userId)] }, async (unit) => {
    const { accessToken, refreshToken, idToken, accessTokenExpiresAt, refreshTokenExpiresAt } = renewed;
    // Appended at whatever version the user is at: these are the newest tokens whatever happened meanwhile.
    unit.append(
      streams.user(userId),
      [ProviderTokensUpdated({ userId, accountId, providerId: tokens.providerId, accessToken, refreshToken, idToken, accessTokenExpiresAt, refreshTokenExpiresAt })],
      { expected: 'any' },
    );
  });
  return renewed;
}

/** The account's tokens, refreshed first when the access token has expired and the provider can refresh it. */
export async function currentTokens(ctx: SocialPorts, request: RequestMetadata, userId: string, selected: SelectedTokens): Promise<HeldProviderTokens> {
  const { tokens, provider } = selected;
  if (!accessTokenExpired(tokens, ctx.clock()) || !tokens.refreshToken || !provider.refresh) return tokens;
  return refreshProviderTokens(ctx, request, userId, selected);
}
