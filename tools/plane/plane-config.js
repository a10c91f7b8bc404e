"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.parsePlaneConfig = parsePlaneConfig;
const node_path_1 = __importDefault(require("node:path"));
const zod_1 = require("zod");
const runtime_1 = require("@apphost/runtime");
/** The all-in-one plane's own settings; each service still parses its own config from the same environment. */
const planeConfigSchema = zod_1.z.object({
    APPHOST_HOST: zod_1.z.string().min(1).default('127.0.0.1'),
    APPHOST_PORT: zod_1.z.coerce.number().int().min(0).max(65535).default(8080),
    APPHOST_HOME: zod_1.z.string().min(1).default('.apphost'),
    NATS_URL: zod_1.z.string().min(1).optional(),
    DATABASE_URL: zod_1.z.string().min(1).optional(),
    REDIS_URL: zod_1.z.string().min(1).optional(),
    BUS_SUBJECT_PREFIX: runtime_1.commonConfigSchema.shape.BUS_SUBJECT_PREFIX,
    OTEL_EXPORTER_OTLP_ENDPOINT: runtime_1.commonConfigSchema.shape.OTEL_EXPORTER_OTLP_ENDPOINT,
    LOG_LEVEL: zod_1.z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
function parsePlaneConfig(env) {
    const config = (0, runtime_1.parseConfig)('apphost plane', planeConfigSchema, env);
    return { ...config, home: node_path_1.default.resolve(config.APPHOST_HOME) };
}
//# sourceMappingURL=plane-config.js.map