import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_NAMES, type ServiceName } from '@apphost/contracts';
import { parseCommonConfig, requireStores, type CommonConfig } from '@apphost/runtime';
import { kustomize } from './kustomize';
import {
  parseQuantity,
  REPO_ROOT,
  selects,
  type Container,
  type Deployment,
  type HorizontalPodAutoscaler,
  type Ingress,
  type K8sObject,
  type NetworkPolicy,
  type NetworkPolicyPort,
  type PodDisruptionBudget,
  type ServiceObject,
} from './manifests';

/**
 * Deployment policy for k8s/: every service is deployable, probed, bounded, hardened and drained the way the
 * runtime expects (libs/runtime). Runs offline on every machine: the base and the dev overlay are rendered
 * in-process (./kustomize.ts, what `kubectl kustomize` renders for the features k8s/ uses) and checked the same way.
 */

const BASE_DIR = path.join(REPO_ROOT, 'k8s', 'base');
const DEV_DIR = path.join(REPO_ROOT, 'k8s', 'overlays', 'dev');
const DOCKERFILE = path.join(REPO_ROOT, 'deploy', 'Dockerfile');
const DOCKERIGNORE = path.join(REPO_ROOT, 'deploy', 'Dockerfile.dockerignore');

/** Services that scale horizontally on load (docs/architecture.md: stateless or shared-state replicas). */
const AUTOSCALED = ['gateway', 'catalog-policy', 'governed-operations'];
/** Each binding-registry instance owns its MCP connections; an autoscaler scaling it in would cut them. */
const NOT_AUTOSCALED = ['binding-registry'];
const OPS_PATHS = ['/healthz', '/readyz', '/metrics'];
const NATS_DEFAULT_PORT = 4222;
const POSTGRES_PORT = 5432;
const REDIS_PORT = 6379;

interface ServiceFacts {
  requires: ('postgres' | 'redis')[];
  httpPort: number;
}

/** What apps/<service>/src/service.ts declares (read as text: tools must not import apps). */
function serviceFacts(service: string): ServiceFacts {
  const source = readFileSync(path.join(REPO_ROOT, 'apps', service, 'src', 'service.ts'), 'utf8');
  const requires = /requires:\s*\[([^\]]*)\]/.exec(source);
  if (!requires) throw new Error(`apps/${service}/src/service.ts: no \`requires\` list found`);
  const port = /defaultHttpPort:\s*(\d+)/.exec(source);
  return {
    requires: [...requires[1].matchAll(/'(postgres|redis)'/g)].map((m) => m[1] as 'postgres' | 'redis'),
    httpPort: port ? Number(port[1]) : Number(parseCommonConfig(service, {}).HTTP_PORT),
  };
}

interface Source {
  name: string;
  load: () => K8sObject[];
}

const sources: Source[] = [
  { name: 'k8s/base', load: () => kustomize(BASE_DIR) },
  { name: 'k8s/overlays/dev', load: () => kustomize(DEV_DIR) },
];

const ofKind = <T extends K8sObject>(docs: K8sObject[], kind: string) => docs.filter((d) => d.kind === kind) as T[];
const mainContainer = (d: Deployment): Container => d.spec.template.spec.containers[0];
const podLabels = (d: Deployment) => d.spec.template.metadata.labels ?? {};

/** A realistic pod name for a Deployment: `<name>-<pod-template-hash, up to 10>-<5>`, the longest form. */
const samplePodName = (deployment: string) => `${deployment}-5d8f9c7b6d-x2k4p`;

/** Stand-ins for values that come from Secrets, shaped like the real thing so the config schema can check the rest. */
const SECRET_PLACEHOLDERS: Record<string, string> = {
  DATABASE_URL: 'postgresql://apphost@postgres.invalid:5432/apphost',
  REDIS_URL: 'redis://redis.invalid:6379',
};

interface ResolvedEnv {
  env: Record<string, string>;
  fromSecret: Set<string>;
  problems: string[];
}

/** The environment the container would see (ConfigMaps resolved, Secrets and field refs replaced by stand-ins). */
function resolveEnv(deployment: Deployment, docs: K8sObject[]): ResolvedEnv {
  const container = mainContainer(deployment);
  const configMaps = new Map(ofKind<K8sObject & { data?: Record<string, string> }>(docs, 'ConfigMap').map((c) => [c.metadata.name, c.data ?? {}]));
  const env: Record<string, string> = {};
  const fromSecret = new Set<string>();
  const problems: string[] = [];
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const data = configMaps.get(source.configMapRef.name);
      if (!data) problems.push(`envFrom ConfigMap ${source.configMapRef.name} is not in the manifests`);
      Object.assign(env, data ?? {});
    }
    if (source.secretRef) problems.push(`envFrom Secret ${source.secretRef.name}: reference secret keys one by one, so the variables stay visible`);
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (from?.fieldRef?.fieldPath === 'metadata.name') env[variable.name] = samplePodName(deployment.metadata.name);
    else if (from?.fieldRef) env[variable.name] = 'field';
    else if (from?.secretKeyRef) {
      env[variable.name] = SECRET_PLACEHOLDERS[variable.name] ?? 's'.repeat(48);
      fromSecret.add(variable.name);
    } else if (from?.configMapKeyRef) {
      const value = configMaps.get(from.configMapKeyRef.name)?.[from.configMapKeyRef.key];
      if (value === undefined) problems.push(`${variable.name}: ConfigMap key ${from.configMapKeyRef.name}/${from.configMapKeyRef.key} not found`);
      else env[variable.name] = value;
    } else env[variable.name] = '';
  }
  return { env, fromSecret, problems };
}

/** Parses the container's environment the way runStandalone does at startup; the problems it would exit 2 with. */
function startupConfig(service: ServiceName, deployment: Deployment, docs: K8sObject[]): { config?: CommonConfig; env: ResolvedEnv; problems: string[] } {
  const resolved = resolveEnv(deployment, docs);
  const problems = [...resolved.problems];
  try {
    const config = parseCommonConfig(service, resolved.env);
    if (!config.NATS_URL) problems.push('NATS_URL: required when a service runs on its own');
    requireStores({ name: service, requires: serviceFacts(service).requires }, config);
    return { config, env: resolved, problems };
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
    return { env: resolved, problems };
  }
}

/** Milliseconds the preStop hook waits, or undefined when there is no sleeping preStop hook. */
function preStopSleepMs(container: Container): number | undefined {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep) return preStop.sleep.seconds * 1000;
  const command = preStop?.exec?.command ?? [];
  const sleep = command.findIndex((c) => /(^|\/)sleep$/.test(c));
  return sleep >= 0 && /^\d+$/.test(command[sleep + 1] ?? '') ? Number(command[sleep + 1]) * 1000 : undefined;
}

/** Does a probe target the container's HTTP port (by the name `http` or by number)? */
function probesHttpPort(container: Container, port: string | number | undefined, httpPort: number): boolean {
  const named = container.ports?.find((p) => p.name === port);
  return port === httpPort || (named !== undefined && named.containerPort === httpPort);
}

const portMatches = (p: NetworkPolicyPort, port: number, containerPortName: string, protocol = 'TCP') =>
  (p.protocol ?? 'TCP') === protocol && (p.port === undefined || p.port === port || p.port === containerPortName);

describe.each(sources)('deployment policy: $name', ({ load }) => {
  let docs: K8sObject[];
  const deployments = () => ofKind<Deployment>(docs, 'Deployment');
  const deploymentOf = (service: string) => deployments().find((d) => d.metadata.labels?.['app.kubernetes.io/name'] === service);
  const requireDeployment = (service: string): Deployment => {
    const deployment = deploymentOf(service);
    if (!deployment) throw new Error(`no Deployment labelled app.kubernetes.io/name=${service}`);
    return deployment;
  };
  /** The parsed startup configuration; the test that reports configuration problems is the one above. */
  const requireConfig = (service: ServiceName, deployment: Deployment): CommonConfig => {
    const { config, problems } = startupConfig(service, deployment, docs);
    if (!config) throw new Error(`${service}: configuration does not parse: ${problems.join('; ')}`);
    return config;
  };

  beforeAll(() => {
    docs = load();
  });

  it('has a Deployment, a Service and a PodDisruptionBudget for every service, and nothing for unknown ones', () => {
    const missing: string[] = [];
    for (const service of SERVICE_NAMES) {
      const deployment = deploymentOf(service);
      if (!deployment) {
        missing.push(`${service}: no Deployment`);
        continue;
      }
      const labels = podLabels(deployment);
      if (!ofKind<ServiceObject>(docs, 'Service').some((s) => s.spec.selector && selects({ matchLabels: s.spec.selector }, labels))) missing.push(`${service}: no Service`);
      if (!ofKind<PodDisruptionBudget>(docs, 'PodDisruptionBudget').some((p) => selects(p.spec.selector, labels))) missing.push(`${service}: no PodDisruptionBudget`);
    }
    expect(missing).toEqual([]);
    expect(deployments().map((d) => d.metadata.labels?.['app.kubernetes.io/name']).sort()).toEqual([...SERVICE_NAMES].sort());
  });

  it('labels every Deployment and its pods with app.kubernetes.io/name and part-of=apphost, and selects its own pods only', () => {
    const problems: string[] = [];
    for (const deployment of deployments()) {
      const name = deployment.metadata.labels?.['app.kubernetes.io/name'];
      for (const [where, labels] of [['metadata', deployment.metadata.labels ?? {}], ['pod template', podLabels(deployment)]] as const) {
        if (labels['app.kubernetes.io/name'] !== name) problems.push(`${deployment.metadata.name}: ${where} app.kubernetes.io/name is ${labels['app.kubernetes.io/name']}`);
        if (labels['app.kubernetes.io/part-of'] !== 'apphost') problems.push(`${deployment.metadata.name}: ${where} lacks app.kubernetes.io/part-of=apphost`);
      }
      if (!selects(deployment.spec.selector, podLabels(deployment))) problems.push(`${deployment.metadata.name}: selector does not match its pod template`);
      for (const other of deployments()) {
        if (other !== deployment && selects(deployment.spec.selector, podLabels(other))) problems.push(`${deployment.metadata.name}: selector also matches ${other.metadata.name}'s pods`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(SERVICE_NAMES)('%s starts with a configuration its runtime accepts', (service) => {
    const deployment = requireDeployment(service);
    const { config, env, problems } = startupConfig(service, deployment, docs);
    expect(problems).toEqual([]);
    const container = mainContainer(deployment);
    // INSTANCE_ID is the pod name, so per-instance bus subjects reach exactly this pod.
    expect(container.env?.find((e) => e.name === 'INSTANCE_ID')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(config?.INSTANCE_ID).toBe(samplePodName(deployment.metadata.name));
    // The listener, the declared container port and the service's own default agree.
    const http = container.ports?.find((p) => p.name === 'http');
    expect(http?.containerPort).toBe(config?.HTTP_PORT);
    expect(config?.HTTP_PORT).toBe(serviceFacts(service).httpPort);
    // Store credentials come from Secrets, never from literals.
    for (const store of ['DATABASE_URL', 'REDIS_URL'] as const) if (env.env[store] !== undefined) expect(env.fromSecret.has(store)).toBe(true);
    // The image starts `node -r ./tools/register.cjs`; the argument names this service's entry point.
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual([`apps/${service}/src/main.ts`]);
    expect(existsSync(path.join(REPO_ROOT, container.args?.[0] ?? ''))).toBe(true);
  });

  it.each(SERVICE_NAMES)('%s is probed, bounded, hardened and drained', (service) => {
    const deployment = requireDeployment(service);
    const config = requireConfig(service, deployment);
    const pod = deployment.spec.template.spec;
    const container = mainContainer(deployment);
    const httpPort = config.HTTP_PORT;
    expect(pod.containers).toHaveLength(1);
    expect(deployment.spec.replicas ?? 1).toBeGreaterThanOrEqual(2);

    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(probesHttpPort(container, container.readinessProbe?.httpGet?.port, httpPort)).toBe(true);
    // /readyz must answer (not-ready, if a store hangs) before the probe gives up: the store ping is bounded under it.
    expect(config.STORE_PING_TIMEOUT_MS * 2).toBeLessThanOrEqual((container.readinessProbe?.timeoutSeconds ?? 1) * 1000);
    expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(probesHttpPort(container, container.livenessProbe?.httpGet?.port, httpPort)).toBe(true);
    if (container.startupProbe) {
      expect(container.startupProbe.httpGet?.path).toBe('/healthz');
      expect(probesHttpPort(container, container.startupProbe.httpGet?.port, httpPort)).toBe(true);
    }

    for (const resource of ['cpu', 'memory']) {
      const request = parseQuantity(container.resources?.requests?.[resource]);
      const limit = parseQuantity(container.resources?.limits?.[resource]);
      expect({ resource, request: request !== undefined, limit: limit !== undefined }).toEqual({ resource, request: true, limit: true });
      expect(limit ?? 0).toBeGreaterThanOrEqual(request ?? 0);
    }

    const security = container.securityContext ?? {};
    expect(security.runAsNonRoot ?? pod.securityContext?.runAsNonRoot).toBe(true);
    expect(security.runAsUser ?? pod.securityContext?.runAsUser).not.toBe(0);
    expect(security.readOnlyRootFilesystem).toBe(true);
    expect(security.allowPrivilegeEscalation).toBe(false);
    expect(security.privileged ?? false).toBe(false);
    expect(security.capabilities?.drop).toContain('ALL');
    expect(security.capabilities?.add ?? []).toEqual([]);
    expect(pod.automountServiceAccountToken).toBe(false);

    // Read-only root: the SWC transpile cache (under /tmp in the image) needs a writable emptyDir, or the process dies at startup.
    const tmp = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
    expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();

    // SIGTERM arrives after the preStop sleep; the bus then drains for up to SHUTDOWN_GRACE_MS, and the pod must not be killed first.
    const sleepMs = preStopSleepMs(container);
    expect(sleepMs).toBeGreaterThanOrEqual(1000);
    expect(sleepMs).toBeLessThanOrEqual(30_000);
    expect((pod.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(config.SHUTDOWN_GRACE_MS + (sleepMs ?? 0));

    const annotations = deployment.spec.template.metadata.annotations ?? {};
    expect(annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(httpPort), 'prometheus.io/path': '/metrics' });
  });

  it('pins every image to a tag or digest, never latest, and runs one image for all services', () => {
    const images = deployments().flatMap((d) => d.spec.template.spec.containers.map((c) => c.image));
    for (const image of images) {
      const digest = /@sha256:[0-9a-f]{64}$/.test(image);
      const tag = /:([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$/.exec(image.replace(/@sha256:[0-9a-f]{64}$/, ''))?.[1];
      expect({ image, pinned: digest || (tag !== undefined && tag !== 'latest') }).toEqual({ image, pinned: true });
    }
    expect(new Set(images).size).toBe(1);
  });

  it('gives every PodDisruptionBudget exactly one of minAvailable/maxUnavailable, allowing one eviction', () => {
    const problems: string[] = [];
    for (const pdb of ofKind<PodDisruptionBudget>(docs, 'PodDisruptionBudget')) {
      const { minAvailable, maxUnavailable } = pdb.spec;
      if ((minAvailable === undefined) === (maxUnavailable === undefined)) problems.push(`${pdb.metadata.name}: set exactly one of minAvailable/maxUnavailable`);
      const targets = deployments().filter((d) => selects(pdb.spec.selector, podLabels(d)));
      if (targets.length !== 1) problems.push(`${pdb.metadata.name}: selects ${targets.length} Deployments`);
      const replicas = targets[0]?.spec.replicas ?? 1;
      if (typeof minAvailable === 'number' && minAvailable >= replicas) problems.push(`${pdb.metadata.name}: minAvailable ${minAvailable} blocks every eviction at ${replicas} replicas`);
      if (maxUnavailable === 0 || maxUnavailable === '0%') problems.push(`${pdb.metadata.name}: maxUnavailable 0 blocks every eviction`);
    }
    expect(problems).toEqual([]);
  });

  it('points every HorizontalPodAutoscaler at an existing Deployment, never below two replicas', () => {
    const hpas = ofKind<HorizontalPodAutoscaler>(docs, 'HorizontalPodAutoscaler');
    for (const hpa of hpas) {
      const { scaleTargetRef, minReplicas, maxReplicas } = hpa.spec;
      expect({ hpa: hpa.metadata.name, kind: scaleTargetRef.kind, apiVersion: scaleTargetRef.apiVersion }).toEqual({ hpa: hpa.metadata.name, kind: 'Deployment', apiVersion: 'apps/v1' });
      expect(deployments().map((d) => d.metadata.name)).toContain(scaleTargetRef.name);
      expect(minReplicas ?? 1).toBeGreaterThanOrEqual(2);
      expect(maxReplicas).toBeGreaterThanOrEqual(minReplicas ?? 1);
    }
    const scaled = hpas.map((h) => deployments().find((d) => d.metadata.name === h.spec.scaleTargetRef.name)?.metadata.labels?.['app.kubernetes.io/name']);
    expect(scaled).toEqual(expect.arrayContaining(AUTOSCALED));
    for (const service of NOT_AUTOSCALED) expect(scaled).not.toContain(service);
  });

  it('carries no credential values: no Secret objects, no literal secrets in env or ConfigMaps', () => {
    const problems: string[] = [];
    for (const secret of ofKind<K8sObject & { data?: object; stringData?: object }>(docs, 'Secret')) {
      if (Object.keys(secret.data ?? {}).length + Object.keys(secret.stringData ?? {}).length > 0) problems.push(`Secret ${secret.metadata.name} holds values`);
    }
    const secretName = /(SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE|CREDENTIAL|API_KEY)/i;
    const urlWithPassword = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i;
    const check = (where: string, name: string, value: string) => {
      if (secretName.test(name)) problems.push(`${where}: ${name} is set literally`);
      if (urlWithPassword.test(value)) problems.push(`${where}: ${name} embeds a password`);
    };
    for (const map of ofKind<K8sObject & { data?: Record<string, string> }>(docs, 'ConfigMap')) {
      for (const [name, value] of Object.entries(map.data ?? {})) check(`ConfigMap ${map.metadata.name}`, name, String(value));
    }
    for (const deployment of deployments()) {
      for (const variable of mainContainer(deployment).env ?? []) if (variable.value !== undefined) check(`Deployment ${deployment.metadata.name}`, variable.name, variable.value);
    }
    expect(problems).toEqual([]);
  });

  it('authenticates the gateway with JWT, its key material from a Secret', () => {
    const gateway = requireDeployment('gateway');
    const env = resolveEnv(gateway, docs);
    const container = mainContainer(gateway);
    // Development auth refuses a non-loopback bind: a pod always verifies real tokens.
    expect(env.env['AUTH_MODE']).toBe('jwt');
    expect(env.env['AUTH_JWT_ISSUER']).toMatch(/\S/);
    expect(env.env['AUTH_JWT_AUDIENCE']).toMatch(/\S/);
    const jwks = env.env['AUTH_JWKS_FILE'];
    const hs256 = env.env['AUTH_JWT_HS256_SECRET'];
    expect([jwks, hs256].filter((v) => v !== undefined)).toHaveLength(1);
    if (hs256 !== undefined) expect(env.fromSecret.has('AUTH_JWT_HS256_SECRET')).toBe(true);
    if (jwks !== undefined) {
      const mount = container.volumeMounts?.find((m) => m.mountPath === path.posix.dirname(jwks));
      const volume = gateway.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
      expect(mount?.readOnly).toBe(true);
      expect(volume?.secret?.secretName).toBeDefined();
      if (volume?.secret?.items) expect(volume.secret.items.map((i) => i.path)).toContain(path.posix.basename(jwks));
    }
  });

  it('exposes only the gateway, and never its ops endpoints', () => {
    for (const service of ofKind<ServiceObject>(docs, 'Service')) expect({ service: service.metadata.name, type: service.spec.type ?? 'ClusterIP' }).toEqual({ service: service.metadata.name, type: 'ClusterIP' });
    const gatewayServices = ofKind<ServiceObject>(docs, 'Service')
      .filter((s) => s.spec.selector && selects({ matchLabels: s.spec.selector }, podLabels(requireDeployment('gateway'))))
      .map((s) => s.metadata.name);
    for (const ingress of ofKind<Ingress>(docs, 'Ingress')) {
      const backends = [ingress.spec.defaultBackend?.service?.name, ...(ingress.spec.rules ?? []).flatMap((r) => r.http?.paths.map((p) => p.backend.service?.name) ?? [])];
      for (const backend of backends.filter((b) => b !== undefined)) expect(gatewayServices).toContain(backend);
      expect(ingress.spec.defaultBackend).toBeUndefined();
      for (const rule of ingress.spec.rules ?? []) {
        for (const route of rule.http?.paths ?? []) {
          const routes = (p: string) => (route.pathType === 'Exact' ? p === route.path : route.path === '/' || p === route.path || p.startsWith(`${route.path?.replace(/\/$/, '')}/`));
          expect({ path: route.path, routesOps: OPS_PATHS.some(routes) }).toEqual({ path: route.path, routesOps: false });
        }
      }
    }
  });

  it('restricts traffic: HTTP port only, from the namespace (gateway: from anywhere, and its sandbox port); egress to DNS, NATS and own stores', () => {
    const policies = ofKind<NetworkPolicy>(docs, 'NetworkPolicy');
    const problems: string[] = [];
    for (const service of SERVICE_NAMES) {
      const deployment = requireDeployment(service);
      const labels = podLabels(deployment);
      const config = requireConfig(service, deployment);
      const httpPort = config.HTTP_PORT;
      // The gateway also serves the web host's sandbox origin on its own port (APPHOST_SANDBOX_PORT).
      const sandboxEnv = deployment.spec.template.spec.containers.flatMap((c) => c.env ?? []).find((e) => e.name === 'APPHOST_SANDBOX_PORT');
      const sandboxPort = service === 'gateway' && sandboxEnv?.value !== undefined ? Number(sandboxEnv.value) : Number.NaN;
      const applying = policies.filter((p) => selects(p.spec.podSelector, labels));
      const types = (p: NetworkPolicy) => p.spec.policyTypes ?? (p.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);
      if (!applying.some((p) => types(p).includes('Ingress'))) problems.push(`${service}: no ingress policy (all ingress allowed)`);
      if (!applying.some((p) => types(p).includes('Egress'))) problems.push(`${service}: no egress policy (all egress allowed)`);

      const ingressRules = applying.flatMap((p) => (types(p).includes('Ingress') ? p.spec.ingress ?? [] : []));
      for (const rule of ingressRules) {
        const ports = rule.ports ?? [];
        if (ports.length === 0 || ports.some((p) => !(p.port === httpPort || p.port === 'http' || p.port === sandboxPort) || (p.protocol ?? 'TCP') !== 'TCP')) {
          problems.push(`${service}: an ingress rule opens more than the HTTP port (${JSON.stringify(rule.ports ?? 'all ports')})`);
        }
        if (service !== 'gateway') {
          const fromOutside = !rule.from || rule.from.length === 0 || rule.from.some((peer) => peer.ipBlock !== undefined);
          if (fromOutside) problems.push(`${service}: an ingress rule admits traffic from outside the cluster`);
        }
      }
      if (service === 'gateway' && !ingressRules.some((r) => (!r.from || r.from.length === 0) && (r.ports ?? []).some((p) => portMatches(p, httpPort, 'http')))) {
        problems.push('gateway: its HTTP port is not open to all sources');
      }
      if (service === 'gateway' && !ingressRules.some((r) => (!r.from || r.from.length === 0) && (r.ports ?? []).some((p) => portMatches(p, sandboxPort, 'sandbox')))) {
        problems.push('gateway: its sandbox port (APPHOST_SANDBOX_PORT) is not open to all sources');
      }

      const egressRules = applying.flatMap((p) => (types(p).includes('Egress') ? p.spec.egress ?? [] : []));
      if (egressRules.some((r) => !r.ports || r.ports.length === 0)) problems.push(`${service}: an egress rule allows every port`);
      const allows = (port: number, protocol = 'TCP') => egressRules.some((r) => (r.ports ?? []).some((p) => portMatches(p, port, '', protocol)));
      const natsPorts = (config.NATS_URL ?? '').split(',').map((u) => Number(new URL(u.trim()).port || NATS_DEFAULT_PORT));
      const needed: [string, number, string?][] = [['DNS', 53, 'UDP'], ...natsPorts.map((p): [string, number] => ['NATS', p])];
      if (serviceFacts(service).requires.includes('postgres')) needed.push(['PostgreSQL', POSTGRES_PORT]);
      if (serviceFacts(service).requires.includes('redis')) needed.push(['Redis', REDIS_PORT]);
      for (const [what, port, protocol] of needed) if (!allows(port, protocol)) problems.push(`${service}: no egress to ${what} (${protocol ?? 'TCP'}/${port})`);
      if (!serviceFacts(service).requires.includes('postgres') && allows(POSTGRES_PORT)) problems.push(`${service}: egress to PostgreSQL it does not use`);
      if (!serviceFacts(service).requires.includes('redis') && allows(REDIS_PORT)) problems.push(`${service}: egress to Redis it does not use`);
    }
    expect(problems).toEqual([]);
  });

  it('keeps every namespaced object in one namespace', () => {
    const namespaces = new Set(docs.filter((d) => d.kind !== 'Namespace').map((d) => d.metadata.namespace));
    expect(namespaces.size).toBe(1);
    const [namespace] = namespaces;
    if (namespace !== undefined) {
      const object = docs.find((d) => d.kind === 'Namespace' && d.metadata.name === namespace);
      expect(object?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    }
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(DOCKERFILE, 'utf8');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map(instructions.filter((l) => /^ARG /.test(l)).map((l) => l.slice(4).split('=') as [string, string]));
  const expand = (s: string) => s.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? '');

  it('builds every stage on node:20.20-bookworm-slim', () => {
    const bases = instructions.filter((l) => /^FROM /.test(l)).map((l) => expand(l.split(/\s+/)[1]));
    expect(bases.length).toBeGreaterThanOrEqual(1);
    for (const base of bases) expect(base).toBe('node:20.20-bookworm-slim');
  });

  it('runs the TypeScript entry point through tools/register.cjs as a non-root numeric user', () => {
    expect(instructions).toContain('ENTRYPOINT ["node", "-r", "./tools/register.cjs"]');
    const cmd = instructions.find((l) => l.startsWith('CMD '));
    const entry = (JSON.parse(cmd?.slice(4) ?? '[]') as string[])[0];
    expect(entry).toMatch(/^apps\/[a-z-]+\/src\/main\.ts$/);
    expect(existsSync(path.join(REPO_ROOT, entry))).toBe(true);
    const user = instructions.filter((l) => l.startsWith('USER ')).pop()?.slice(5).trim() ?? '';
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    for (const deployment of kustomize(BASE_DIR).filter((d) => d.kind === 'Deployment') as Deployment[]) {
      const runAsUser = mainContainer(deployment).securityContext?.runAsUser ?? deployment.spec.template.spec.securityContext?.runAsUser;
      if (runAsUser !== undefined) expect(String(runAsUser)).toBe(user.split(':')[0]);
    }
    // The transpile cache sits under /tmp, which the Deployments mount writable.
    expect(dockerfile).toMatch(/SWC_NODE_CACHE_DIR=\/tmp\//);
  });

  it('copies only what its dockerignore lets through, and what the runtime needs', () => {
    const allowed = readFileSync(DOCKERIGNORE, 'utf8').split('\n').filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = instructions
      .filter((l) => /^COPY /.test(l) && !/--from=/.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1, -1).filter((t) => !t.startsWith('--')));
    // A source is let through when the allow-list names it or a folder it is in.
    for (const source of copied) expect({ source, allowed: allowed.some((a) => source === a || source.startsWith(`${a}/`)) }).toEqual({ source, allowed: true });
    for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.base.json', 'tools/register.cjs', 'apps', 'libs']) expect(copied).toContain(needed);
  });
});
