import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ConformanceFake } from '../kit/conformance.js';
import {
  asConformanceFake,
  bearerCredential,
  FakeHttpError,
  FakeProvider,
  RecordStore,
  type StoredRecord,
  RequestWindow,
} from '../kit/fake-provider.js';

/**
 * A local stand-in for Gusto's API v1 (https://docs.gusto.com/app-integrations/reference), written
 * from its reference (employees, departments; pagination, versioning, rate limits, errors):
 *
 * - OAuth access tokens as `Authorization: Bearer`; the company a token serves is in the path
 *   (`/v1/companies/{company_uuid}/...`), another company's uuid answers 404.
 * - `GET /v1/companies/{company_uuid}/employees?page=&per=`: a bare JSON array, `page` from 1,
 *   `per` 25 by default; the reference names no maximum and larger pages are cut to 100 without a
 *   word (verify), so a short page is the last. No parameter filters by time and an employee
 *   carries no modification time: its `version` changes with every edit.
 * - `GET /v1/companies/{company_uuid}/departments`: every department at once, a bare array.
 * - Versioning: `PUT /v1/employees/{employee_id}` and `PUT /v1/departments/{department_uuid}` must
 *   send the record's current `version`, else 409 Conflict (`version` stale or missing: 422); only
 *   the attributes sent change and the answer is the record with its new version.
 * - `POST /v1/companies/{company_uuid}/employees` (201; `first_name`, `last_name` required),
 *   `POST .../departments` (201; `title` required). `DELETE /v1/employees/{id}` (204) deletes an
 *   employee still onboarding; `DELETE /v1/departments/{uuid}` (204) one without members. A deleted
 *   employee or department is listed nowhere.
 * - Errors `{errors: [{error_key, category, message}]}`; 200 requests a minute per user and
 *   application, past which a 429.
 */

type Record_ = Record<string, unknown> & { uuid: string; version: string };
type GustoObject = 'employees' | 'departments';
type Row = StoredRecord<Record_>;

const PER_MAX = 100;
const PER_DEFAULT = 25;
const PER_MINUTE = 200;
const COMPANY = '7d9a1f2e-5c3b-4e8a-9f10-2b6c4d8e0a11';
const employeeWritable = [
  'first_name',
  'middle_initial',
  'last_name',
  'preferred_first_name',
  'email',
  'work_email',
  'date_of_birth',
  'ssn',
  'two_percent_shareholder',
];
const departmentWritable = ['title'];

const failure = (status: number, key: string, category: string, message: string) =>
  Object.assign(new FakeHttpError(status, message, category), { key });

export async function startFakeGusto(): Promise<ConformanceFake> {
  const stores: Record<GustoObject, RecordStore<Record_>> = {
    employees: new RecordStore(),
    departments: new RecordStore(),
  };
  const budget = new RequestWindow(PER_MINUTE, 60_000, false);

  const fake = new FakeProvider({
    credentialOf: bearerCredential,
    errorBody: (error) => ({
      errors: [
        {
          error_key: (error as { key?: string }).key ?? 'base',
          category:
            error.status === 401
              ? 'invalid_token'
              : error.status === 429
                ? 'rate_limit_exceeded'
                : (error.code ?? (error.status === 404 ? 'not_found' : 'invalid_operation')),
          message: error.status === 401 ? 'The access token is invalid or expired' : error.message,
        },
      ],
    }),
    rateLimitCode: 'rate_limit_exceeded',
  });
  const now = () => fake.now();
  const router = fake.router;

  // 200 requests in any minute, counted on the fake's own (real) time.
  router.use(
    budget.refusing(
      (headers) => new FakeHttpError(429, 'Rate limit exceeded', 'rate_limit_exceeded', headers),
    ),
  );

  const companyOf = (ctx: Context) => {
    if (ctx.params.company !== COMPANY)
      throw failure(404, 'company_uuid', 'not_found', `Company ${ctx.params.company} not found`);
  };
  const visible = (object: GustoObject) =>
    stores[object].live().filter((row) => (row.visibleFromMs ?? row.modifiedMs) <= now());

  router.get('/v1/companies/:company/employees', (ctx) => {
    companyOf(ctx);
    const page = ctx.query.page === undefined ? 1 : Number(ctx.query.page);
    const per = ctx.query.per === undefined ? PER_DEFAULT : Number(ctx.query.per);
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(per) || per < 1)
      throw failure(400, 'page', 'invalid_attribute_value', 'page and per must be positive integers');
    fake.logListing(ctx, { object: 'employees', pageSize: per, maxPageSize: PER_MAX });
    const size = Math.min(per, PER_MAX);
    ctx.body = visible('employees')
      .slice((page - 1) * size, page * size)
      .map((row) => row.record);
  });

  router.get('/v1/companies/:company/departments', (ctx) => {
    companyOf(ctx);
    const all = visible('departments');
    fake.logListing(ctx, {
      object: 'departments',
      pageSize: Number.MAX_SAFE_INTEGER,
      maxPageSize: Number.MAX_SAFE_INTEGER,
    });
    ctx.body = all.map((row) => row.record);
  });

  const rowOf = (object: GustoObject, id: string): Row => {
    const row = stores[object].get(id);
    if (!row)
      throw failure(
        404,
        'base',
        'not_found',
        `${object === 'employees' ? 'Employee' : 'Department'} ${id} not found`,
      );
    return row;
  };
  const valuesOf = (ctx: Context, allowed: string[]): Record<string, unknown> => {
    const body = ctx.request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw failure(400, 'base', 'invalid_operation', 'The request body must be a JSON object');
    const values = { ...(body as Record<string, unknown>) };
    delete values.version;
    for (const name of Object.keys(values))
      if (!allowed.includes(name))
        throw failure(422, name, 'invalid_attribute_value', `${name} is not a permitted attribute`);
    return values;
  };
  const newVersion = () => randomUUID().replace(/-/g, '');

  const createEmployee = (values: Record<string, unknown>, ms: number): Row => {
    const uuid = randomUUID();
    const record: Record_ = {
      uuid,
      version: newVersion(),
      company_uuid: COMPANY,
      first_name: null,
      middle_initial: null,
      last_name: null,
      preferred_first_name: null,
      email: null,
      work_email: null,
      date_of_birth: null,
      has_ssn: false,
      department: null,
      terminated: false,
      onboarded: false,
      onboarding_status: 'admin_onboarding_incomplete',
      current_employment_status: null,
      two_percent_shareholder: false,
      payment_method: 'Check',
      jobs: [],
      terminations: [],
      custom_fields: [],
      ...values,
    };
    if (record.ssn !== undefined) {
      record.has_ssn = Boolean(record.ssn);
      delete record.ssn;
    }
    stores.employees.put(uuid, record, ms);
    return stores.employees.get(uuid)!;
  };
  const createDepartment = (values: Record<string, unknown>, ms: number): Row => {
    const uuid = randomUUID();
    stores.departments.put(
      uuid,
      {
        uuid,
        version: newVersion(),
        company_uuid: COMPANY,
        title: null,
        employees: [],
        contractors: [],
        ...values,
      },
      ms,
    );
    return stores.departments.get(uuid)!;
  };

  router.post('/v1/companies/:company/employees', (ctx) => {
    companyOf(ctx);
    const values = valuesOf(ctx, employeeWritable);
    for (const name of ['first_name', 'last_name'])
      if (typeof values[name] !== 'string' || !values[name])
        throw failure(422, name, 'invalid_attribute_value', `${name} can't be blank`);
    ctx.status = 201;
    ctx.body = createEmployee(values, now()).record;
  });

  router.post('/v1/companies/:company/departments', (ctx) => {
    companyOf(ctx);
    const values = valuesOf(ctx, departmentWritable);
    if (typeof values.title !== 'string' || !values.title)
      throw failure(422, 'title', 'invalid_attribute_value', "title can't be blank");
    ctx.status = 201;
    ctx.body = createDepartment(values, now()).record;
  });

  const update = (object: GustoObject, allowed: string[]) => (ctx: Context) => {
    const row = rowOf(object, ctx.params.id);
    const version = (ctx.request.body as { version?: unknown } | undefined)?.version;
    if (typeof version !== 'string' || !version)
      throw failure(422, 'version', 'invalid_attribute_value', 'version is required');
    if (version !== row.record.version)
      throw failure(
        409,
        'version',
        'invalid_operation',
        'The resource you are trying to update has been updated since you last retrieved it',
      );
    const values = valuesOf(ctx, allowed);
    if (values.ssn !== undefined) {
      values.has_ssn = Boolean(values.ssn);
      delete values.ssn;
    }
    Object.assign(row.record, values, { version: newVersion() });
    row.modifiedMs = now();
    ctx.body = row.record;
  };
  router.put('/v1/employees/:id', update('employees', employeeWritable));
  router.put('/v1/departments/:id', update('departments', departmentWritable));

  router.get('/v1/employees/:id', (ctx) => {
    ctx.body = rowOf('employees', ctx.params.id).record;
  });
  router.get('/v1/departments/:id', (ctx) => {
    ctx.body = rowOf('departments', ctx.params.id).record;
  });

  router.delete('/v1/employees/:id', (ctx) => {
    const row = rowOf('employees', ctx.params.id);
    if (row.record.onboarded)
      throw failure(422, 'base', 'invalid_operation', 'Only an employee still onboarding can be deleted');
    stores.employees.remove(ctx.params.id, now());
    ctx.status = 204;
  });
  router.delete('/v1/departments/:id', (ctx) => {
    const row = rowOf('departments', ctx.params.id);
    if ((row.record.employees as unknown[]).length || (row.record.contractors as unknown[]).length)
      throw failure(422, 'base', 'invalid_operation', 'A department with members cannot be deleted');
    stores.departments.remove(ctx.params.id, now());
    ctx.status = 204;
  });

  await fake.start();

  const storeOf = (object: string) => stores[object as GustoObject];
  return asConformanceFake(fake, {
    seed: (object, times) =>
      times.map((ms) => {
        const n = storeOf(object).nextId();
        return object === 'employees'
          ? createEmployee({ first_name: `First${n}`, last_name: `Last${n}`, email: `e${n}@example.com` }, ms)
              .record.uuid
          : createDepartment({ title: `Department ${n}` }, ms).record.uuid;
      }),
    touch(object, id, modifiedMs, options) {
      const row = storeOf(object).get(id);
      if (!row) throw new Error(`no ${object} ${id}`);
      // Nothing says when a record changed: an edit shows in its values and its new version.
      Object.assign(row, { modifiedMs, visibleFromMs: options?.visibleFromMs });
      row.record.version = newVersion();
      if (object === 'employees')
        row.record.preferred_first_name = `Edited ${new Date(modifiedMs).toISOString()}`;
      else row.record.title = `Edited ${new Date(modifiedMs).toISOString()}`;
    },
    remove: (object, id, atMs) => void storeOf(object).remove(id, atMs),
    stored: (object, id) => storeOf(object).get(id)?.record,
  });
}

/** The company the fake's token serves (the connection's `companyId`). */
export const GUSTO_FAKE_COMPANY = COMPANY;
