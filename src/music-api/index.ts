export * from './client.js';
export * from './costs.js';
export * from './errors.js';
export * from './guessed-fields.js';
export * from '../music-api-spec.js';
export * from './task-status.js';
export * from './webhook-signature.js';
