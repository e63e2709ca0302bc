export * from './mail-bus.ts';
export { EventLogMailBus, eventLogConsumerName, mailJobEventTypes, mailJobFromEvent } from './event-log.ts';
export { KafkaMailBus, mailTopicName, type KafkaMailBusOptions } from './kafka.ts';
