import { call, projectPath, type Installation, type Integration, type Operation, type Page } from '../api';
import { Loading, ProblemNote, useLoad } from '../ui';

interface Bucket {
  start: number;
  records: number;
  failures: number;
}

const steps = [60_000, 3_600_000, 86_400_000];

/** Records delivered (finished reads) and failed operations, in at most 24 buckets up to now. */
function bucketsOf(operations: Operation[], now: number): { step: number; buckets: Bucket[] } {
  const oldest = Math.min(now, ...operations.map((operation) => Date.parse(operation.createTime)));
  const step = steps.find((candidate) => (now - oldest) / candidate < 24) ?? steps[steps.length - 1];
  const count = Math.min(24, Math.max(6, Math.ceil((now - oldest) / step) + 1));
  const first = Math.floor(now / step) * step - (count - 1) * step;
  const buckets = Array.from({ length: count }, (_, index) => ({
    start: first + index * step,
    records: 0,
    failures: 0,
  }));
  for (const operation of operations) {
    const index = Math.floor((Date.parse(operation.createTime) - first) / step);
    const bucket = buckets[index];
    if (!bucket) continue;
    if (operation.status === 'failure') bucket.failures += 1;
    if (operation.actionType === 'read') bucket.records += operation.metadata.progress?.recordsProcessed ?? 0;
  }
  return { step, buckets };
}

const label = (start: number, step: number) => {
  const date = new Date(start);
  return step >= 86_400_000
    ? date.toLocaleDateString()
    : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
};

export function ActivityView({ project }: { project: string }) {
  const data = useLoad(async () => {
    const base = projectPath(project);
    const [integrations, installations] = await Promise.all([
      call<Integration[]>('GET', `${base}/integrations`),
      call<Installation[]>('GET', `${base}/installations`),
    ]);
    // The latest page of each installation's operations: enough for a recent picture.
    const pages = await Promise.all(
      installations.map((installation) =>
        call<Page<Operation>>(
          'GET',
          `${base}/integrations/${installation.integrationId}/installations/${installation.id}/operations`,
          { query: { pageSize: 200 } },
        ),
      ),
    );
    const operations = pages.flatMap((page) => page.results);
    return integrations.map((integration) => ({
      integration,
      operations: operations.filter((operation) => operation.integrationId === integration.id),
    }));
  }, [project]);
  const now = Date.now();
  return (
    <>
      <h1>Activity</h1>
      <p>
        Records delivered by reads, and failed operations, per integration (latest 200 operations of each
        installation).
      </p>
      <Loading loading={data.loading && !data.value} what="activity" />
      <ProblemNote problem={data.problem} />
      {data.value?.length === 0 && <p>No integrations yet.</p>}
      {data.value?.map(({ integration, operations }) => (
        <Chart key={integration.id} title={integration.name} {...bucketsOf(operations, now)} />
      ))}
    </>
  );
}

function Chart({ title, step, buckets }: { title: string; step: number; buckets: Bucket[] }) {
  const width = 640;
  const height = 160;
  const maxRecords = Math.max(1, ...buckets.map((bucket) => bucket.records));
  const maxFailures = Math.max(1, ...buckets.map((bucket) => bucket.failures));
  const slot = width / buckets.length;
  const totalRecords = buckets.reduce((sum, bucket) => sum + bucket.records, 0);
  const totalFailures = buckets.reduce((sum, bucket) => sum + bucket.failures, 0);
  const summary = `${title}: ${totalRecords} records delivered, ${totalFailures} failed operations`;
  return (
    <article aria-labelledby={`chart-${title}`}>
      <h2 id={`chart-${title}`}>{title}</h2>
      <p>
        <span className="legend legend-records">records delivered: {totalRecords}</span>{' '}
        <span className="legend legend-failures">failures: {totalFailures}</span>
      </p>
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={summary} className="chart">
        {buckets.map((bucket, index) => {
          const recordsHeight = (bucket.records / maxRecords) * height;
          const failuresHeight = (bucket.failures / maxFailures) * (height / 2);
          return (
            <g key={bucket.start}>
              <rect
                className="bar-records"
                x={index * slot + 2}
                y={height - recordsHeight}
                width={slot * 0.6 - 2}
                height={recordsHeight}
              >
                <title>{`${label(bucket.start, step)}: ${bucket.records} records`}</title>
              </rect>
              <rect
                className="bar-failures"
                x={index * slot + slot * 0.6}
                y={height - failuresHeight}
                width={slot * 0.3}
                height={failuresHeight}
              >
                <title>{`${label(bucket.start, step)}: ${bucket.failures} failures`}</title>
              </rect>
              {index % Math.ceil(buckets.length / 6) === 0 && (
                <text x={index * slot + 2} y={height + 15} className="axis">
                  {label(bucket.start, step)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <details>
        <summary>As a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">Records delivered</th>
              <th scope="col">Failures</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((bucket) => (
              <tr key={bucket.start}>
                <td>{label(bucket.start, step)}</td>
                <td>{bucket.records}</td>
                <td>{bucket.failures}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </article>
  );
}
