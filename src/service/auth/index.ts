export { AuthService, type AuthServiceOptions, type Account } from './auth-service.js';
export { resolveJwtSecret, JWT_SECRET_ENV } from './jwt-secret.js';
