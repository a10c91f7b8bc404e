"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.REPO_ROOT = void 0;
exports.parseManifests = parseManifests;
exports.selects = selects;
exports.parseQuantity = parseQuantity;
const node_path_1 = __importDefault(require("node:path"));
const yaml_1 = require("yaml");
/** The repository root (this file lives in tools/k8s). */
exports.REPO_ROOT = node_path_1.default.resolve(__dirname, '..', '..');
/** Every YAML document in `text`, as objects; empty documents (a trailing `---`) are dropped. */
function parseManifests(text, source) {
    const objects = [];
    for (const doc of (0, yaml_1.parseAllDocuments)(text)) {
        if (doc.errors.length > 0)
            throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
        const value = doc.toJS();
        if (value === null || value === undefined)
            continue;
        if (typeof value !== 'object' || Array.isArray(value))
            throw new Error(`${source}: a document is not a mapping`);
        const object = value;
        if (!object.kind || !object.apiVersion || !object.metadata?.name)
            throw new Error(`${source}: a document lacks kind, apiVersion or metadata.name`);
        objects.push(object);
    }
    return objects;
}
/** Does a label selector select these labels? (matchLabels and matchExpressions, as the API server evaluates them.) */
function selects(selector, labels = {}) {
    for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
        if (labels[key] !== value)
            return false;
    for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
        const has = Object.prototype.hasOwnProperty.call(labels, key);
        if (operator === 'In' && !(has && values.includes(labels[key])))
            return false;
        if (operator === 'NotIn' && has && values.includes(labels[key]))
            return false;
        if (operator === 'Exists' && !has)
            return false;
        if (operator === 'DoesNotExist' && has)
            return false;
    }
    return true;
}
const QUANTITY = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const FACTORS = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
/** A Kubernetes resource quantity (`250m`, `1`, `512Mi`) as a number; undefined when it is not one. */
function parseQuantity(value) {
    if (typeof value === 'number')
        return value;
    const match = QUANTITY.exec(value ?? '');
    return match ? Number(match[1]) * FACTORS[match[2] ?? ''] : undefined;
}
//# sourceMappingURL=manifests.js.map