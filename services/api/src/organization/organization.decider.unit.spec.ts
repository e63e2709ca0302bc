import { describe, expect, it } from 'vitest';
import {
  MemberAdded,
  OrganizationCreated,
  OrganizationDeleted,
  OrganizationSlugReleased,
  OrganizationSlugReserved,
  OrganizationUpdated,
  TeamCreated,
  TeamMemberAdded,
  type DomainEvent,
  type TimedEvent,
} from '@portcullis/contracts';
import { deciderSpec } from '../decider-spec.test-support.ts';
import {
  decideOrganization,
  decideSlugClaim,
  decideSlugRelease,
  evolveSlugReservation,
  initialSlugReservation,
  type CreateOrganization,
} from './organization.decider.ts';
import { evolveOrganization, initialOrganizationState, organizationModel } from './organization.state.ts';

const given = deciderSpec({ evolve: evolveOrganization, initial: initialOrganizationState, decide: decideOrganization });
const claim = deciderSpec({ evolve: evolveSlugReservation, initial: initialSlugReservation, decide: decideSlugClaim });
const release = deciderSpec({ evolve: evolveSlugReservation, initial: initialSlugReservation, decide: decideSlugRelease });

const at = (event: DomainEvent): TimedEvent => ({ event, occurredAt: '2026-05-01T10:00:00.000Z' });
const orgId = 'org1';
const created = at(
  OrganizationCreated({ organizationId: orgId, name: 'Acme', slug: 'acme', logo: null, metadata: '{"plan":"pro"}', createdByUserId: 'u-owner' }),
);
const member = (userId: string, role: string, memberId = `m-${userId}`) =>
  at(MemberAdded({ organizationId: orgId, memberId, userId, role, teamId: null, via: 'added' }));
const acme = [created, member('u-owner', 'owner'), member('u-admin', 'admin'), member('u-member', 'member')];

function create(overrides: Partial<CreateOrganization> = {}): CreateOrganization {
  return {
    type: 'create',
    organizationId: 'org2',
    name: 'Globex',
    slug: 'globex',
    logo: null,
    metadata: undefined,
    creatorUserId: 'u1',
    memberId: 'm1',
    defaultTeam: null,
    byServer: false,
    creatorMemberships: 0,
    policy: { allowCreate: true, organizationLimit: null },
    ...overrides,
  };
}

describe('organization decider: create', () => {
  it('creates the organization with its creator as owner', () => {
    given([])
      .when(create({ logo: 'https://x/logo.png', metadata: { plan: 'pro', seats: 5 } }))
      .then([
        OrganizationCreated({
          organizationId: 'org2',
          name: 'Globex',
          slug: 'globex',
          logo: 'https://x/logo.png',
          metadata: '{"plan":"pro","seats":5}',
          createdByUserId: 'u1',
        }),
        MemberAdded({ organizationId: 'org2', memberId: 'm1', userId: 'u1', role: 'owner', teamId: null, via: 'creator' }),
      ]);
  });

  it('adds a default team named as the organization, holding the creator, when asked', () => {
    given([])
      .when(create({ defaultTeam: { teamId: 't1', teamMemberId: 'tm1' } }))
      .then([
        OrganizationCreated({ organizationId: 'org2', name: 'Globex', slug: 'globex', logo: null, metadata: null, createdByUserId: 'u1' }),
        MemberAdded({ organizationId: 'org2', memberId: 'm1', userId: 'u1', role: 'owner', teamId: null, via: 'creator' }),
        TeamCreated({ organizationId: 'org2', teamId: 't1', name: 'Globex' }),
        TeamMemberAdded({ organizationId: 'org2', teamId: 't1', teamMemberId: 'tm1', userId: 'u1' }),
      ]);
  });

  it('keeps an empty metadata object as its JSON text', () => {
    const [event] = decideOrganization(create({ metadata: {} }), initialOrganizationState());
    expect(event).toMatchObject({ type: 'organization.created.v1', data: { metadata: '{}' } });
  });

  it('refuses when creation is switched off, unless a server call creates for a user', () => {
    const off = { allowCreate: false, organizationLimit: null };
    given([]).when(create({ policy: off })).thenFails('YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION');
    expect(decideOrganization(create({ policy: off, byServer: true }), initialOrganizationState())).toHaveLength(2);
  });

  it('refuses a creator at the organization limit, server call or not', () => {
    const limit = { allowCreate: true, organizationLimit: 2 };
    given([]).when(create({ policy: limit, creatorMemberships: 2 })).thenFails('YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS');
    given([]).when(create({ policy: limit, creatorMemberships: 2, byServer: true })).thenFails('YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS');
    expect(decideOrganization(create({ policy: limit, creatorMemberships: 1 }), initialOrganizationState())).toHaveLength(2);
  });

  it('checks the switch before the limit, as better-auth', () => {
    given([])
      .when(create({ policy: { allowCreate: false, organizationLimit: 1 }, creatorMemberships: 5 }))
      .thenFails('YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION');
  });

  it('never writes over a stream that already holds an organization', () => {
    given([created]).when(create({ organizationId: orgId })).thenFails('ORGANIZATION_ALREADY_EXISTS');
  });
});

describe('organization decider: update', () => {
  it('records only the fields that change', () => {
    given(acme)
      .when({ type: 'update', actorUserId: 'u-owner', changes: { name: 'Acme Inc', slug: 'acme', logo: 'l.png', metadata: { plan: 'pro' } } })
      .then([OrganizationUpdated({ organizationId: orgId, name: 'Acme Inc', logo: 'l.png' })]);
  });

  it('replaces the metadata as a whole and can clear the logo', () => {
    const withLogo = [...acme, at(OrganizationUpdated({ organizationId: orgId, logo: 'l.png' }))];
    given(withLogo)
      .when({ type: 'update', actorUserId: 'u-admin', changes: { logo: null, metadata: { tier: 'gold' } } })
      .then([OrganizationUpdated({ organizationId: orgId, logo: null, metadata: '{"tier":"gold"}' })]);
  });

  it('moves the slug', () => {
    given(acme)
      .when({ type: 'update', actorUserId: 'u-owner', changes: { slug: 'acme-inc' } })
      .then([OrganizationUpdated({ organizationId: orgId, slug: 'acme-inc' })]);
  });

  it('decides nothing when nothing changes', () => {
    given(acme).when({ type: 'update', actorUserId: 'u-owner', changes: {} }).then([]);
    given(acme).when({ type: 'update', actorUserId: 'u-owner', changes: { name: 'Acme', slug: 'acme' } }).then([]);
  });

  it('refuses a member without organization:update, and a non-member', () => {
    given(acme).when({ type: 'update', actorUserId: 'u-member', changes: { name: 'Mine' } }).thenFails('YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION');
    given(acme).when({ type: 'update', actorUserId: 'u-stranger', changes: { name: 'Mine' } }).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });

  it('answers an organization that is gone or never was as one the caller is not in, as better-auth', () => {
    given([]).when({ type: 'update', actorUserId: 'u-owner', changes: { name: 'X' } }).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
    given([...acme, at(OrganizationDeleted({ organizationId: orgId, slug: 'acme', memberUserIds: ['u-owner'] }))])
      .when({ type: 'update', actorUserId: 'u-owner', changes: { name: 'X' } })
      .thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });

  it('grants a multi-role member what any of its roles grants', () => {
    given([created, member('u-multi', 'member,admin')])
      .when({ type: 'update', actorUserId: 'u-multi', changes: { name: 'Multi' } })
      .then([OrganizationUpdated({ organizationId: orgId, name: 'Multi' })]);
  });
});

describe('organization decider: delete', () => {
  it('deletes the organization naming who was still a member', () => {
    given(acme)
      .when({ type: 'delete', actorUserId: 'u-owner' })
      .then([OrganizationDeleted({ organizationId: orgId, slug: 'acme', memberUserIds: ['u-owner', 'u-admin', 'u-member'] })]);
  });

  it('names the slug the organization holds at the time', () => {
    given([...acme, at(OrganizationUpdated({ organizationId: orgId, slug: 'acme-2' }))])
      .when({ type: 'delete', actorUserId: 'u-owner' })
      .then([OrganizationDeleted({ organizationId: orgId, slug: 'acme-2', memberUserIds: ['u-owner', 'u-admin', 'u-member'] })]);
  });

  it('refuses admins and members (organization:delete is the owner’s), and non-members', () => {
    given(acme).when({ type: 'delete', actorUserId: 'u-admin' }).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
    given(acme).when({ type: 'delete', actorUserId: 'u-member' }).thenFails('YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION');
    given(acme).when({ type: 'delete', actorUserId: 'u-stranger' }).thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });

  it('cannot delete twice', () => {
    given([...acme, at(OrganizationDeleted({ organizationId: orgId, slug: 'acme', memberUserIds: [] }))])
      .when({ type: 'delete', actorUserId: 'u-owner' })
      .thenFails('USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION');
  });
});

describe('organization slug reservation', () => {
  const reserved = OrganizationSlugReserved({ slug: 'acme', organizationId: 'org1' });

  it('reserves a free slug', () => {
    claim([]).when({ slug: 'acme', organizationId: 'org1', refusal: 'ORGANIZATION_ALREADY_EXISTS' }).then([reserved]);
  });

  it('refuses a slug another organization holds, with the refusal of the route asking', () => {
    claim([reserved]).when({ slug: 'acme', organizationId: 'org2', refusal: 'ORGANIZATION_ALREADY_EXISTS' }).thenFails('ORGANIZATION_ALREADY_EXISTS');
    claim([reserved])
      .when({ slug: 'acme', organizationId: 'org2', refusal: 'ORGANIZATION_SLUG_ALREADY_TAKEN' })
      .thenFails('ORGANIZATION_SLUG_ALREADY_TAKEN');
  });

  it('decides nothing when the organization already holds it', () => {
    claim([reserved]).when({ slug: 'acme', organizationId: 'org1', refusal: 'ORGANIZATION_SLUG_ALREADY_TAKEN' }).then([]);
  });

  it('lets a released slug be reserved again', () => {
    claim([reserved, OrganizationSlugReleased({ slug: 'acme', organizationId: 'org1' })])
      .when({ slug: 'acme', organizationId: 'org2', refusal: 'ORGANIZATION_ALREADY_EXISTS' })
      .then([OrganizationSlugReserved({ slug: 'acme', organizationId: 'org2' })]);
  });

  it('releases only a slug the organization holds', () => {
    release([reserved]).when({ slug: 'acme', organizationId: 'org1' }).then([OrganizationSlugReleased({ slug: 'acme', organizationId: 'org1' })]);
    release([reserved]).when({ slug: 'acme', organizationId: 'org2' }).then([]);
    release([]).when({ slug: 'acme', organizationId: 'org1' }).then([]);
  });

  it('ignores a release by an organization that does not hold it', () => {
    const state = [reserved, OrganizationSlugReleased({ slug: 'acme', organizationId: 'org2' })].reduce(evolveSlugReservation, initialSlugReservation());
    expect(state).toEqual({ status: 'reserved', organizationId: 'org1' });
  });
});

describe('the organization stream\'s model', () => {
  it('keeps a snapshot of its fold as JSON that reads back as the same state, members, invitations and teams', () => {
    const teamed = [...acme, at(TeamCreated({ organizationId: orgId, teamId: 't1', name: 'Core' })), at(TeamMemberAdded({ organizationId: orgId, teamId: 't1', teamMemberId: 'tm1', userId: 'u-member' }))];
    const state = teamed.reduce((folded, timed) => organizationModel.evolve(folded, timed.event, timed), organizationModel.initial());
    const codec = organizationModel.snapshot!;
    const stored = JSON.parse(JSON.stringify(codec.encode(state))) as unknown;
    expect(codec.decode(stored)).toEqual(state);
  });
});
