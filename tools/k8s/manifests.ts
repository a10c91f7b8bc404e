import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/** The repository root (this file lives in tools/k8s). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Any Kubernetes object; kind-specific shapes below are read through it. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}

export interface HttpProbe {
  httpGet?: { path: string; port: string | number };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean } }[];
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
  startupProbe?: HttpProbe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface PodSpec {
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: Container[];
  volumes?: { name: string; emptyDir?: Record<string, unknown>; secret?: { secretName: string; items?: { key: string; path: string }[] } }[];
}

export interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    selector: LabelSelector;
    template: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}

export interface ServiceObject extends K8sObject {
  spec: { type?: string; selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: string | number }[] };
}

export interface PodDisruptionBudget extends K8sObject {
  spec: { selector: LabelSelector; minAvailable?: number | string; maxUnavailable?: number | string };
}

export interface HorizontalPodAutoscaler extends K8sObject {
  spec: { scaleTargetRef: { apiVersion: string; kind: string; name: string }; minReplicas?: number; maxReplicas: number };
}

export interface NetworkPolicyPort {
  protocol?: string;
  port?: number | string;
}
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string };
}
export interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: ('Ingress' | 'Egress')[];
    ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
    egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[];
  };
}

export interface Ingress extends K8sObject {
  spec: {
    defaultBackend?: { service?: { name: string } };
    rules?: { host?: string; http?: { paths: { path?: string; pathType: string; backend: { service?: { name: string; port: { name?: string; number?: number } } } }[] } }[];
  };
}

/** Every YAML document in `text`, as objects; empty documents (a trailing `---`) are dropped. */
export function parseManifests(text: string, source: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${source}: a document is not a mapping`);
    const object = value as K8sObject;
    if (!object.kind || !object.apiVersion || !object.metadata?.name) throw new Error(`${source}: a document lacks kind, apiVersion or metadata.name`);
    objects.push(object);
  }
  return objects;
}

/** Does a label selector select these labels? (matchLabels and matchExpressions, as the API server evaluates them.) */
export function selects(selector: LabelSelector, labels: Record<string, string> = {}): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    if (operator === 'In' && !(has && values.includes(labels[key]))) return false;
    if (operator === 'NotIn' && has && values.includes(labels[key])) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const QUANTITY = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const FACTORS: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };

/** A Kubernetes resource quantity (`250m`, `1`, `512Mi`) as a number; undefined when it is not one. */
export function parseQuantity(value: string | number | undefined): number | undefined {
  if (typeof value === 'number') return value;
  const match = QUANTITY.exec(value ?? '');
  return match ? Number(match[1]) * FACTORS[match[2] ?? ''] : undefined;
}
