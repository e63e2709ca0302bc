import type { DomainEvent, Invitation, Member, Organization, Team } from '@portcullis/contracts';
import { evolveOrganization, requireOrganization, type ActiveOrganization, type InvitationState, type MemberState, type OrganizationState, type TeamState } from './organization.state.ts';

/** The organization as the decided events leave it: an answer shows what was appended, not a re-read. */
export function foldDecided(state: OrganizationState, events: readonly DomainEvent[], now: Date): ActiveOrganization {
  const occurredAt = now.toISOString();
  return requireOrganization(events.reduce((folded, event) => evolveOrganization(folded, { event, occurredAt }), state));
}

/**
 * Metadata is stored as its JSON text and answered as the object it was given. Text that is not a JSON object
 * (imported from elsewhere, say) is answered as none rather than failing the whole answer.
 */
export function parseMetadata(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function organizationAnswer(org: ActiveOrganization): Organization {
  return { id: org.id, name: org.name, slug: org.slug, logo: org.logo, metadata: parseMetadata(org.metadata), createdAt: org.createdAt };
}

/** A member as better-auth's member row; `teamId` only where the member joined into a team. */
export function memberAnswer(organizationId: string, member: MemberState): Member {
  const { id, userId, role, teamId, createdAt } = member;
  return { id, organizationId, userId, role, createdAt, ...(teamId !== null ? { teamId } : {}) };
}

export function invitationAnswer(organizationId: string, invitation: InvitationState): Invitation {
  const { id, email, role, status, teamId, inviterId, expiresAt, createdAt } = invitation;
  return { id, organizationId, email, role, status, teamId, inviterId, expiresAt, createdAt };
}

export function teamStateAnswer(organizationId: string, team: TeamState): Team {
  return { id: team.id, name: team.name, organizationId, createdAt: team.createdAt, updatedAt: team.updatedAt ?? team.createdAt };
}
