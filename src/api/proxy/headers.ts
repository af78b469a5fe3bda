import type { IncomingHttpHeaders } from 'node:http';
import { isUuid } from '../../core/ids.js';
import { ProblemError, type ProblemIssue } from '../../core/problem.js';

/**
 * The proxy's own request headers (Ampersand's, kept for compatibility): which version of the
 * protocol, which project and key, and which installation (by id, or integration name and group).
 */
export const PROXY_VERSION = '1';

export interface ProxyHeaders {
  projectId: string;
  apiKey: string;
  installationId?: string;
  integrationName?: string;
  groupRef?: string;
}

/** Headers that address Ferry (never forwarded to the provider). */
export function isProxyHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('x-amp-') || lower === 'x-api-key';
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text.trim() === '' ? undefined : text.trim();
}

function issue(name: string, detail: string, value?: string): ProblemIssue {
  return { in: 'header', name, detail, ...(value !== undefined && { value }) };
}

/** The proxy headers of a request, or a 400 problem listing every header that is missing or invalid. */
export function parseProxyHeaders(headers: IncomingHttpHeaders): ProxyHeaders {
  const version = single(headers, 'x-amp-proxy-version');
  if (version !== PROXY_VERSION) {
    throw ProblemError.invalid(
      [
        issue(
          'x-amp-proxy-version',
          version === undefined
            ? `x-amp-proxy-version is required; send "${PROXY_VERSION}"`
            : `x-amp-proxy-version "${version}" is not supported; send "${PROXY_VERSION}"`,
          version,
        ),
      ],
      'The request is not a proxy request Ferry understands.',
    );
  }
  const issues: ProblemIssue[] = [];
  const projectId = single(headers, 'x-amp-project-id');
  if (projectId === undefined) issues.push(issue('x-amp-project-id', 'x-amp-project-id is required'));
  else if (!isUuid(projectId)) {
    issues.push(
      issue('x-amp-project-id', 'x-amp-project-id must be the project id (a UUID), not its name', projectId),
    );
  }
  const apiKey = single(headers, 'x-api-key');
  if (apiKey === undefined) issues.push(issue('x-api-key', 'x-api-key is required'));
  const installationId = single(headers, 'x-amp-installation-id');
  const integrationName = single(headers, 'x-amp-integration-name');
  const groupRef = single(headers, 'x-amp-group-ref');
  if (installationId === undefined) {
    if (integrationName === undefined || groupRef === undefined) {
      const missing =
        integrationName === undefined && groupRef === undefined
          ? 'x-amp-installation-id'
          : integrationName === undefined
            ? 'x-amp-integration-name'
            : 'x-amp-group-ref';
      issues.push(
        issue(missing, 'x-amp-installation-id, or x-amp-integration-name with x-amp-group-ref, is required'),
      );
    }
  } else if (!isUuid(installationId)) {
    issues.push(issue('x-amp-installation-id', 'x-amp-installation-id must be a UUID', installationId));
  }
  if (issues.length) throw ProblemError.invalid(issues, 'Proxy headers are missing or invalid.');
  // The installation id wins when both ways of naming the installation are sent.
  return installationId !== undefined
    ? { projectId: projectId!, apiKey: apiKey!, installationId }
    : { projectId: projectId!, apiKey: apiKey!, integrationName, groupRef };
}
