import { bearerJson, settingsAt, type ProviderCase } from './provider-case.test-support.ts';
import { client } from './fake-provider.test-support.ts';
import { discordProvider } from './discord.ts';
import { dropboxProvider } from './dropbox.ts';
import { githubProvider } from './github.ts';
import { gitlabProvider } from './gitlab.ts';
import { kickProvider } from './kick.ts';
import { linkedinProvider } from './linkedin.ts';
import { spotifyProvider } from './spotify.ts';

/** Providers that describe the user at a user endpoint of their API, with a standard token endpoint. */

const bearerToken = { access_token: 'access-token', token_type: 'Bearer', expires_in: 3600, refresh_token: 'refresh-token', scope: 'a b' };
const bearerTokenParsed = { accessToken: 'access-token', tokenType: 'Bearer', refreshToken: 'refresh-token', idToken: null, scopes: ['a', 'b'] };

const githubUser = { login: 'octocat', id: 1, avatar_url: 'https://github.com/images/error/octocat_happy.gif', name: 'monalisa octocat', email: null };
const githubNamelessUser = { ...githubUser, name: null };
const githubPublicUser = { ...githubUser, email: 'public@example.com' };
const gitlabUser = {
  id: 1,
  username: 'john_smith',
  name: 'John Smith',
  state: 'active',
  locked: false,
  avatar_url: 'https://gitlab.example/uploads/-/system/user/avatar/1/cd8.jpeg',
  email: 'john@example.com',
};

const discordUser = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', discriminator: '0', avatar: '8342729096ea3675442027381ff50dfe', email: 'nelly@discord.com', verified: true };
const discordPlainUser = { ...discordUser, global_name: null, avatar: null, email: null, verified: false };
const dropboxAccount = {
  account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
  name: { display_name: 'Franz Ferdinand (Personal)', given_name: 'Franz' },
  email: 'franz@dropbox.com',
  email_verified: true,
  profile_photo_url: 'https://dl-web.dropbox.com/account_photo/get/dbaphid',
};
const dropboxUnverified = { account_id: 'dbid:2', name: { display_name: 'F' }, email: 'f@example.com', email_verified: false };
const kickUser = { user_id: 123456, name: 'kickstreamer', email: 'streamer@example.com', profile_picture: 'https://files.kick.com/p.webp' };
const linkedinMember = { sub: '782bbtaQ', name: 'John Doe', given_name: 'John', family_name: 'Doe', picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile', locale: 'en-US', email: 'doe@email.com', email_verified: true };
const linkedinUnverified = { sub: '782bbtaQ', name: 'John Doe', email: 'doe@email.com', email_verified: false };
const spotifyUser = { id: 'wizzler', display_name: 'JM Wizzler', email: 'email@example.com', images: [{ url: 'https://i.scdn.co/image/ab6775700000ee85', height: 300, width: 300 }] };
const spotifyPlainUser = { id: 'wizzler', display_name: null, email: 'email@example.com', images: [] };

/** The expected profiles' `raw` is the very object the fake answered: the provider's own answer, unmapped. */
export const userEndpointCases: ProviderCase[] = [
  {
    id: 'discord',
    build: (fake) => discordProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['identify', 'email'], pkce: false, loginHint: false, params: { prompt: 'none' } },
    token: { path: '/token', authentication: 'post', answer: bearerToken, expected: bearerTokenParsed },
    profiles: [
      {
        name: 'a verified user with an avatar',
        routes: { 'GET /user': bearerJson(discordUser) },
        profile: {
          id: '80351110224678912',
          email: 'nelly@discord.com',
          emailVerified: true,
          name: 'Nelly',
          image: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
          raw: discordUser,
        },
      },
      {
        name: 'an unverified user without avatar or email',
        routes: { 'GET /user': bearerJson(discordPlainUser) },
        profile: {
          id: '80351110224678912',
          email: null,
          emailVerified: false,
          name: 'nelly',
          // (80351110224678912 >> 22) % 6: the default avatar Discord shows.
          image: `https://cdn.discordapp.com/embed/avatars/${Number((80351110224678912n >> 22n) % 6n)}.png`,
          raw: discordPlainUser,
        },
      },
    ],
  },
  {
    id: 'dropbox',
    build: (fake) => dropboxProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['account_info.read'], pkce: true, loginHint: false },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'sl.u.AbX9y6Fe3AuH5o66', expires_in: 14400, token_type: 'bearer', scope: 'account_info.read', account_id: 'dbid:AAH4f99', uid: '12345' },
      expected: { accessToken: 'sl.u.AbX9y6Fe3AuH5o66', tokenType: 'bearer', refreshToken: null, scopes: ['account_info.read'] },
    },
    profiles: [
      {
        name: 'a verified account',
        routes: { 'POST /user': bearerJson(dropboxAccount) },
        profile: {
          id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
          email: 'franz@dropbox.com',
          emailVerified: true,
          name: 'Franz Ferdinand (Personal)',
          image: 'https://dl-web.dropbox.com/account_photo/get/dbaphid',
          raw: dropboxAccount,
        },
      },
      {
        name: 'an unverified email',
        routes: { 'POST /user': bearerJson(dropboxUnverified) },
        profile: { id: 'dbid:2', email: 'f@example.com', emailVerified: false, name: 'F', image: null, raw: dropboxUnverified },
      },
    ],
  },
  {
    id: 'github',
    build: (fake) => githubProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['read:user', 'user:email'], pkce: true, loginHint: true },
    token: {
      path: '/token',
      authentication: 'post',
      // GitHub separates the granted scopes with commas.
      answer: { access_token: 'gho_16C7e42F292c6912E7710c838347Ae178B4a', scope: 'read:user,user:email', token_type: 'bearer' },
      expected: { accessToken: 'gho_16C7e42F292c6912E7710c838347Ae178B4a', tokenType: 'bearer', scopes: ['read:user', 'user:email'], accessTokenExpiresAt: null },
    },
    profiles: [
      {
        name: 'a private email, primary and verified in the email list',
        routes: {
          'GET /user': bearerJson(githubUser),
          'GET /user/emails': bearerJson([
            { email: 'old@example.com', verified: true, primary: false, visibility: null },
            { email: 'octocat@github.com', verified: true, primary: true, visibility: 'private' },
          ]),
        },
        // The /user answer as GitHub sent it (its email null): the email list completes only the profile.
        profile: { id: '1', email: 'octocat@github.com', emailVerified: true, name: 'monalisa octocat', image: githubUser.avatar_url, raw: githubUser },
        check: (fake) => {
          if (fake.request('GET /user').headers['user-agent'] !== 'portcullis') throw new Error('GitHub needs a User-Agent');
        },
      },
      {
        name: 'a primary email not yet verified, and no display name',
        routes: {
          'GET /user': bearerJson(githubNamelessUser),
          'GET /user/emails': bearerJson([{ email: 'octocat@github.com', verified: false, primary: true, visibility: 'private' }]),
        },
        profile: { id: '1', email: 'octocat@github.com', emailVerified: false, name: 'octocat', image: githubUser.avatar_url, raw: githubNamelessUser },
      },
      {
        name: 'a public email, the email list refused (no user:email grant)',
        routes: { 'GET /user': bearerJson(githubPublicUser), 'GET /user/emails': { status: 404, json: { message: 'Not Found' } } },
        profile: { id: '1', email: 'public@example.com', emailVerified: false, name: 'monalisa octocat', image: githubUser.avatar_url, raw: githubPublicUser },
      },
    ],
  },
  {
    id: 'gitlab',
    // A self-hosted GitLab: only its base URL is configured, every endpoint follows from it.
    build: (fake) => gitlabProvider({ ...client, authorizationUrl: null, tokenUrl: null, userInfoUrl: null, jwksUrl: null, issuer: `${fake.url}/` }),
    authorize: { path: '/oauth/authorize', defaultScopes: ['read_user'], pkce: true, loginHint: true },
    token: {
      path: '/oauth/token',
      authentication: 'post',
      answer: { access_token: 'de6780bc', token_type: 'Bearer', expires_in: 7200, refresh_token: '8257e652', scope: 'read_user', created_at: 1607635748 },
      expected: { accessToken: 'de6780bc', tokenType: 'Bearer', refreshToken: '8257e652', scopes: ['read_user'] },
    },
    profiles: [
      {
        name: 'an active user (GitLab does not say the email is verified)',
        routes: { 'GET /api/v4/user': bearerJson(gitlabUser) },
        profile: { id: '1', email: 'john@example.com', emailVerified: false, name: 'John Smith', image: gitlabUser.avatar_url, raw: gitlabUser },
      },
      { name: 'a blocked user', routes: { 'GET /api/v4/user': bearerJson({ ...gitlabUser, state: 'blocked' }) }, profile: null },
      { name: 'a locked user', routes: { 'GET /api/v4/user': bearerJson({ ...gitlabUser, locked: true }) }, profile: null },
    ],
  },
  {
    id: 'kick',
    build: (fake) => kickProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['user:read'], pkce: true, loginHint: false },
    token: { path: '/token', authentication: 'post', answer: bearerToken, expected: bearerTokenParsed },
    profiles: [
      {
        name: 'the token\'s user (Kick does not say the email is verified)',
        routes: { 'GET /user': bearerJson({ data: [kickUser], message: 'OK' }) },
        // The answer's user, as better-auth's `data` is (not the `{ data: [...] }` around it).
        profile: { id: '123456', email: 'streamer@example.com', emailVerified: false, name: 'kickstreamer', image: 'https://files.kick.com/p.webp', raw: kickUser },
      },
      { name: 'no user in the answer', routes: { 'GET /user': bearerJson({ data: [], message: 'OK' }) }, profile: null },
    ],
  },
  {
    id: 'linkedin',
    build: (fake) => linkedinProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['profile', 'email', 'openid'], pkce: false, loginHint: true },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'AQUvlL_DYEzvT2wz1QJiEPeLioeA', expires_in: 5184000, scope: 'email,openid,profile', token_type: 'Bearer', id_token: 'eyJ.li' },
      expected: { accessToken: 'AQUvlL_DYEzvT2wz1QJiEPeLioeA', idToken: 'eyJ.li', scopes: ['email', 'openid', 'profile'] },
    },
    profiles: [
      {
        name: 'a verified member',
        routes: { 'GET /user': bearerJson(linkedinMember) },
        profile: { id: '782bbtaQ', email: 'doe@email.com', emailVerified: true, name: 'John Doe', image: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile', raw: linkedinMember },
      },
      {
        name: 'an unverified email',
        routes: { 'GET /user': bearerJson(linkedinUnverified) },
        profile: { id: '782bbtaQ', email: 'doe@email.com', emailVerified: false, name: 'John Doe', image: null, raw: linkedinUnverified },
      },
    ],
  },
  {
    id: 'spotify',
    build: (fake) => spotifyProvider(settingsAt(fake)),
    authorize: { path: '/authorize', defaultScopes: ['user-read-email'], pkce: true, loginHint: false },
    token: {
      path: '/token',
      authentication: 'post',
      answer: { access_token: 'NgCXRK...MzYjw', token_type: 'Bearer', scope: 'user-read-email', expires_in: 3600, refresh_token: 'NgAagA...Um_SHo' },
      expected: { accessToken: 'NgCXRK...MzYjw', refreshToken: 'NgAagA...Um_SHo', scopes: ['user-read-email'] },
    },
    profiles: [
      {
        name: 'a user with a picture (Spotify does not say the email is verified)',
        routes: { 'GET /user': bearerJson(spotifyUser) },
        profile: { id: 'wizzler', email: 'email@example.com', emailVerified: false, name: 'JM Wizzler', image: 'https://i.scdn.co/image/ab6775700000ee85', raw: spotifyUser },
      },
      {
        name: 'no picture, no display name',
        routes: { 'GET /user': bearerJson(spotifyPlainUser) },
        profile: { id: 'wizzler', email: 'email@example.com', emailVerified: false, name: '', image: null, raw: spotifyPlainUser },
      },
    ],
  },
];
