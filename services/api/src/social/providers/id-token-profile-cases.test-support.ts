import { unsignedToken } from './fake-provider.test-support.ts';
import { settingsAt, type ProviderCase } from './provider-case.test-support.ts';
import { appleProvider } from './apple.ts';
import { googleProvider } from './google.ts';
import { microsoftProvider } from './microsoft.ts';
import { twitchProvider } from './twitch.ts';

/** The providers whose profile is the id token their token endpoint answers. */

/** The expected profiles' `raw` is the very claims the id token carries: the provider's own word, unmapped. */

const appleClaims = {
  iss: 'https://appleid.apple.com',
  aud: 'client-id',
  sub: '001234.8f3a9c5e2b7d4e1f.1234',
  email: 'x7k2p9@privaterelay.appleid.com',
  email_verified: 'true',
  is_private_email: 'true',
};
const appleIdToken = unsignedToken(appleClaims);
const appleUnverifiedClaims = { sub: '001234.aa', email: 'ada@school.example', email_verified: false };

const googleClaims = { iss: 'https://accounts.google.com', sub: '110169484474386276334', email: 'ada@gmail.com', email_verified: true, name: 'Ada Lovelace', picture: 'https://lh3.googleusercontent.com/a/ada' };
const googleUnverifiedClaims = { sub: '42', email: 'ada@corp.example', email_verified: false };

const microsoftClaims = (claims: Record<string, unknown>) => ({
  iss: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
  tid: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  ...claims,
});
const microsoftWorkClaims = microsoftClaims({ oid: '00000000-0000-0000-66f3-3332eca7ea81', email: 'ada@contoso.com', verified_primary_email: ['ada@contoso.com'], name: 'Ada' });
const microsoftUnlistedClaims = microsoftClaims({ oid: 'oid-2', email: 'ada@contoso.com', name: 'Ada' });

const twitchClaims = { iss: 'https://id.twitch.tv/oauth2', sub: '713936733', preferred_username: 'ada_twitch', email: 'ada@example.com', email_verified: true, picture: 'https://static-cdn.jtvnw.net/ada.png' };
const twitchEmaillessClaims = { sub: '7', preferred_username: 'anon' };

const photo = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]);

export const idTokenProfileCases: ProviderCase[] = [
  {
    id: 'apple',
    build: (fake) =>
      appleProvider({ ...settingsAt(fake), userInfoUrl: null, teamId: null, keyId: null, privateKey: null, appBundleIdentifier: null }),
    authorize: {
      path: '/authorize',
      responseType: 'code id_token',
      defaultScopes: ['email', 'name'],
      pkce: true,
      loginHint: false,
      params: { response_mode: 'form_post' },
    },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'a0b1c2d3', expires_in: 3600, id_token: appleIdToken, refresh_token: 'r0e1f2', token_type: 'bearer' },
      expected: { accessToken: 'a0b1c2d3', refreshToken: 'r0e1f2', idToken: appleIdToken, tokenType: 'bearer', scopes: [] },
    },
    profiles: [
      {
        name: 'the first sign-in, with the name Apple sends once',
        routes: {},
        tokens: { idToken: appleIdToken },
        user: { name: { firstName: 'Ada', lastName: 'Lovelace' } },
        // The claims as Apple signed them: the one-time name is the callback's, not theirs.
        profile: { id: '001234.8f3a9c5e2b7d4e1f.1234', email: 'x7k2p9@privaterelay.appleid.com', emailVerified: true, name: 'Ada Lovelace', image: null, raw: appleClaims },
      },
      {
        name: 'a later sign-in of a user whose email Apple has not verified',
        routes: {},
        tokens: { idToken: unsignedToken(appleUnverifiedClaims) },
        profile: { id: '001234.aa', email: 'ada@school.example', emailVerified: false, name: '', image: null, raw: appleUnverifiedClaims },
      },
      { name: 'no id token', routes: {}, profile: null },
    ],
  },
  {
    id: 'google',
    build: (fake) => googleProvider({ ...settingsAt(fake), userInfoUrl: null }),
    authorize: {
      path: '/authorize',
      defaultScopes: ['email', 'profile', 'openid'],
      pkce: true,
      loginHint: true,
      params: { include_granted_scopes: 'true' },
    },
    token: {
      path: '/token',
      authentication: 'post',
      answer: {
        access_token: 'ya29.a0AfH6SM',
        expires_in: 3599,
        refresh_token: '1//0gdf',
        scope: 'openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
        token_type: 'Bearer',
        id_token: 'eyJ.google.token',
      },
      expected: {
        accessToken: 'ya29.a0AfH6SM',
        refreshToken: '1//0gdf',
        idToken: 'eyJ.google.token',
        scopes: ['openid', 'https://www.googleapis.com/auth/userinfo.email', 'https://www.googleapis.com/auth/userinfo.profile'],
      },
    },
    profiles: [
      {
        name: 'a verified Gmail user',
        routes: {},
        tokens: { idToken: unsignedToken(googleClaims) },
        profile: { id: '110169484474386276334', email: 'ada@gmail.com', emailVerified: true, name: 'Ada Lovelace', image: 'https://lh3.googleusercontent.com/a/ada', raw: googleClaims },
      },
      {
        name: 'a Workspace user whose email is not verified',
        routes: {},
        tokens: { idToken: unsignedToken(googleUnverifiedClaims) },
        profile: { id: '42', email: 'ada@corp.example', emailVerified: false, name: '', image: null, raw: googleUnverifiedClaims },
      },
      { name: 'no id token', routes: {}, profile: null },
    ],
  },
  {
    id: 'microsoft',
    build: (fake) => microsoftProvider({ ...settingsAt(fake), userInfoUrl: `${fake.url}/me`, tenantId: 'common' }),
    authorize: { path: '/authorize', defaultScopes: ['openid', 'profile', 'email', 'User.Read', 'offline_access'], pkce: true, loginHint: true },
    token: {
      path: '/token',
      authentication: 'post',
      answer: {
        token_type: 'Bearer',
        scope: 'openid profile email User.Read',
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: 'eyJ0eXAi.ms',
        refresh_token: 'AwABAAAA',
        id_token: 'eyJ.ms.id',
      },
      expected: { accessToken: 'eyJ0eXAi.ms', refreshToken: 'AwABAAAA', idToken: 'eyJ.ms.id', tokenType: 'Bearer', scopes: ['openid', 'profile', 'email', 'User.Read'] },
      refreshExtra: { scope: 'openid profile email User.Read offline_access' },
    },
    profiles: [
      {
        name: 'a work account with a photo, its email in the verified list',
        routes: { 'GET /me/photos/48x48/$value': { bytes: { contentType: 'image/jpeg', data: photo } } },
        tokens: { idToken: unsignedToken(microsoftWorkClaims) },
        profile: {
          id: '00000000-0000-0000-66f3-3332eca7ea81',
          email: 'ada@contoso.com',
          emailVerified: true,
          name: 'Ada',
          image: `data:image/jpeg;base64,${photo.toString('base64')}`,
          // The id token's claims: Graph's photo is the image only.
          raw: microsoftWorkClaims,
        },
        check: (fake) => {
          if (fake.request('GET /me/photos/48x48/$value').headers.authorization !== 'Bearer access-token') throw new Error('photo asked without the token');
        },
      },
      {
        name: 'no photo, an email Entra does not say is verified',
        routes: {},
        tokens: { idToken: unsignedToken(microsoftUnlistedClaims) },
        profile: { id: 'oid-2', email: 'ada@contoso.com', emailVerified: false, name: 'Ada', image: null, raw: microsoftUnlistedClaims },
      },
      { name: 'an id token without oid', routes: {}, tokens: { idToken: unsignedToken(microsoftClaims({ sub: 'pairwise', email: 'ada@contoso.com' })) }, profile: null },
    ],
  },
  {
    id: 'twitch',
    build: (fake) => twitchProvider({ ...settingsAt(fake), userInfoUrl: null, jwksUrl: null, issuer: null }),
    authorize: {
      path: '/authorize',
      defaultScopes: ['user:read:email', 'openid'],
      pkce: false,
      loginHint: false,
      params: { claims: '{"id_token":{"email":null,"email_verified":null,"preferred_username":null,"picture":null}}' },
    },
    token: {
      path: '/token',
      authentication: 'post',
      // Twitch answers its scopes as a list.
      answer: { access_token: 'rfx2uswqe8l4', expires_in: 14124, id_token: 'eyJ.twitch', refresh_token: '5b93chm6', scope: ['openid', 'user:read:email'], token_type: 'bearer' },
      expected: { accessToken: 'rfx2uswqe8l4', refreshToken: '5b93chm6', idToken: 'eyJ.twitch', scopes: ['openid', 'user:read:email'] },
    },
    profiles: [
      {
        name: 'a verified Twitch user',
        routes: {},
        tokens: { idToken: unsignedToken(twitchClaims) },
        profile: { id: '713936733', email: 'ada@example.com', emailVerified: true, name: 'ada_twitch', image: 'https://static-cdn.jtvnw.net/ada.png', raw: twitchClaims },
      },
      {
        name: 'a user without an email',
        routes: {},
        tokens: { idToken: unsignedToken(twitchEmaillessClaims) },
        profile: { id: '7', email: null, emailVerified: false, name: 'anon', image: null, raw: twitchEmaillessClaims },
      },
    ],
  },
];
