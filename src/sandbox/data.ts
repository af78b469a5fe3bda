import { between, pick, recordRandom, saltOf } from './random.js';
import { dealStages, lifecycleStages, type ObjectName } from './schema.js';
import { Timeline } from './timeline.js';

/** A record as the API returns it. */
export type SandboxRecord = Record<string, unknown> & { id: string; createdAt: string; updatedAt: string };

const firstNames =
  'Ada Alan Amara Ana Arjun Beatriz Chen Chloe Daniel Dmitri Elena Emeka Fatima Felix Grace Hana Hugo Ines Isaac Jamal Jonas Kai Keiko Lars Leila Lucia Marco Maya Mei Nadia Noah Olga Omar Priya Rafael Rosa Samir Sofia Tariq Tomas Uma Victor Wen Yara Yusuf Zoe'.split(
    ' ',
  );
const lastNames =
  'Abara Becker Costa Dubois Eriksen Fischer Garcia Haddad Ito Jensen Kowalski Lindqvist Moreau Nakamura Okafor Petrov Quinn Rossi Schmidt Tanaka Usman Varga Walsh Xu Yilmaz Zhang Silva Novak Murphy Khan Lopez Meyer'.split(
    ' ',
  );
const jobTitles =
  'Account Executive|CEO|CTO|Data Engineer|Head of Sales|Marketing Manager|Operations Lead|Product Manager|Software Engineer|Solutions Architect|Support Specialist|VP Finance'.split(
    '|',
  );
const companyWords =
  'Acme Apex Aurora Blue Bright Cedar Copper Delta Ember Falcon Granite Harbor Helix Iron Juniper Lumen Maple Nimbus Nova Orbit Pine Quartz River Summit Tidal Vertex Willow Zenith'.split(
    ' ',
  );
const companyNouns =
  'Analytics Bio Cloud Dynamics Energy Foods Freight Health Labs Logistics Media Networks Robotics Software Studios Systems Textiles Ventures'.split(
    ' ',
  );
const companySuffixes = ['Inc.', 'Ltd', 'GmbH', 'SA', 'LLC', 'Group', 'Co.'];
const dealKinds = ['Renewal', 'Expansion', 'New business', 'Pilot', 'Upsell'];
const industries =
  'Agriculture Construction Education Energy Finance Healthcare Hospitality Manufacturing Media Retail Software Transportation'.split(
    ' ',
  );
const dayMs = 86_400_000;

const idPrefixes: Record<ObjectName, string> = { contacts: 'ctc', companies: 'cmp', deals: 'deal' };
const idPattern = /^(ctc|cmp|deal)_(\d{8,15})$/;

/** Ids are the record index behind a per-object prefix, so GET /{id} needs no lookup table. */
export function idOf(object: ObjectName, index: number): string {
  return `${idPrefixes[object]}_${String(index).padStart(8, '0')}`;
}

/** The index behind an id of this object (also for records created through the API); undefined otherwise. */
export function indexOf(object: ObjectName, id: string): number | undefined {
  const match = idPattern.exec(id);
  return match && match[1] === idPrefixes[object] ? Number(match[2]) : undefined;
}

export interface GeneratedCounts {
  contacts: number;
  companies: number;
  deals: number;
}

/**
 * The generated part of the dataset: record i of each object is a pure function of the seed and i,
 * computed on demand. Nothing is stored, so a million contacts cost no memory.
 */
export class Generator {
  private readonly timelines: Record<ObjectName, Timeline>;
  private readonly salts: Record<ObjectName, number>;
  private readonly identitySalt = saltOf('company-identity');

  constructor(
    private readonly seed: number,
    readonly counts: GeneratedCounts,
    readonly anchorMs: number,
  ) {
    this.salts = { contacts: saltOf('contacts'), companies: saltOf('companies'), deals: saltOf('deals') };
    this.timelines = {
      contacts: new Timeline(counts.contacts, anchorMs, seed ^ this.salts.contacts),
      companies: new Timeline(counts.companies, anchorMs, seed ^ this.salts.companies),
      deals: new Timeline(counts.deals, anchorMs, seed ^ this.salts.deals),
    };
  }

  count(object: ObjectName): number {
    return this.counts[object];
  }

  updatedAtOf(object: ObjectName, index: number): number {
    return this.timelines[object].at(index);
  }

  /** First generated index updated at or after t; the since/until filters are index ranges. */
  firstIndexAtOrAfter(object: ObjectName, t: number): number {
    return this.timelines[object].firstAtOrAfter(t);
  }

  record(object: ObjectName, index: number): SandboxRecord {
    const random = recordRandom(this.seed, this.salts[object], index);
    const updatedAt = this.timelines[object].at(index);
    // Created up to a year before the last update, most of them shortly before.
    const createdAt = updatedAt - Math.floor(random() ** 2 * 365 * dayMs);
    const system = {
      id: idOf(object, index),
      createdAt: new Date(createdAt).toISOString(),
      updatedAt: new Date(updatedAt).toISOString(),
    };
    switch (object) {
      case 'contacts':
        return this.contact(index, random, system);
      case 'companies':
        return this.company(index, random, system);
      case 'deals':
        return this.deal(random, system, createdAt);
    }
  }

  private companyIndexFor(random: () => number): number | undefined {
    return this.counts.companies > 0 ? Math.floor(random() * this.counts.companies) : undefined;
  }

  /** Name and domain of a generated company, shared by contacts that work there. */
  private companyIdentity(index: number): { name: string; domain: string } {
    // A stream of its own, so a contact naming company j agrees with company j's record.
    const random = recordRandom(this.seed, this.identitySalt, index);
    const word = pick(random, companyWords);
    const noun = pick(random, companyNouns);
    const suffix = pick(random, companySuffixes);
    const slug = `${word}${noun}`.toLowerCase();
    return { name: `${word} ${noun} ${suffix}`, domain: `${slug}${index % 1000}.example` };
  }

  private contact(index: number, random: () => number, system: SandboxRecord): SandboxRecord {
    const firstName = pick(random, firstNames);
    const lastName = pick(random, lastNames);
    const companyIndex = this.companyIndexFor(random);
    const employer = companyIndex === undefined ? undefined : this.companyIdentity(companyIndex);
    const local = `${firstName}.${lastName}${index}`.toLowerCase();
    return {
      id: system.id,
      firstName,
      lastName,
      email: `${local}@${employer?.domain ?? 'mail.example'}`,
      phone: `+1-555-${between(random, 100, 999)}-${String(between(random, 0, 9999)).padStart(4, '0')}`,
      company: employer?.name ?? null,
      jobTitle: pick(random, jobTitles),
      lifecycleStage: pick(random, lifecycleStages),
      createdAt: system.createdAt,
      updatedAt: system.updatedAt,
    };
  }

  private company(index: number, random: () => number, system: SandboxRecord): SandboxRecord {
    const { name, domain } = this.companyIdentity(index);
    return {
      id: system.id,
      name,
      domain,
      industry: pick(random, industries),
      employees: Math.round(Math.exp(random() * Math.log(20_000))),
      createdAt: system.createdAt,
      updatedAt: system.updatedAt,
    };
  }

  private deal(random: () => number, system: SandboxRecord, createdAt: number): SandboxRecord {
    const companyIndex = this.companyIndexFor(random);
    const company = companyIndex === undefined ? undefined : this.companyIdentity(companyIndex);
    const kind = pick(random, dealKinds);
    return {
      id: system.id,
      name: company ? `${company.name}: ${kind}` : kind,
      amount: between(random, 10, 5000) * 50,
      stage: pick(random, dealStages),
      closeDate: new Date((Math.floor(createdAt / dayMs) + between(random, 10, 120)) * dayMs).toISOString(),
      companyId: companyIndex === undefined ? null : idOf('companies', companyIndex),
      createdAt: system.createdAt,
      updatedAt: system.updatedAt,
    };
  }
}
