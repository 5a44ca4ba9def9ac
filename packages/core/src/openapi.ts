import { generateOpenApiDocument } from 'trpc-to-openapi';
import { v1Router } from './v1-router.ts';

export function buildV1OpenApiDocument(baseUrl: string) {
  return generateOpenApiDocument(v1Router, {
    title: 'Leadwire public API',
    version: '1.0.0',
    baseUrl: `${baseUrl}/v1`,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A Public API key: ck_live_...' } },
  });
}
