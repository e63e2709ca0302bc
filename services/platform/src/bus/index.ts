export * from './mail-bus.ts';
export { EventLogMailBus, mailJobEventTypes, mailJobFromEvent } from './event-log.ts';
export { KafkaMailBus } from './kafka.ts';
