import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { runConformance } from '../../support/storage-conformance.js';

runConformance('memory', { open: () => new MemoryBackend() });
