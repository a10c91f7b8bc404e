import { Inject, Injectable, Module, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { BusClient } from '@apphost/bus';
import type { ServiceDatabase } from '@apphost/persistence';
import { FAULT_POINTS, FaultPoints, type ServiceContext } from '@apphost/runtime';
import type { LifecycleConfig } from './config';
import { AppAuditHandlers } from './events/app-audit.handlers';
import { EventLedgerRepository } from './events/event-ledger.repository';
import { FindCallEventHandlers } from './events/find-call-event.handlers';
import { SealedReferencesHandlers } from './events/sealed-references.handlers';
import { SealedReferencesRepository } from './events/sealed-references.repository';
import type { LifecycleFaultPoint } from './lifecycle.faults';
import { LifecycleHandlers } from './lifecycle.handlers';
import { LIFECYCLE_DATABASE } from './lifecycle.tokens';
import { MessageRepository } from './messages/message.repository';
import { MessageWaiter } from './messages/message-waiter';
import { MessagesHandlers } from './messages/messages.handlers';
import { MessagesService } from './messages/messages.service';
import { LifecycleMetrics } from './metrics';
import { LifecycleRepository } from './sessions/lifecycle.repository';
import { LifecycleService } from './sessions/lifecycle.service';
import { PrincipalRevocationHandlers } from './principals/principal-revocation.handlers';
import { SessionStandingHandlers } from './principals/session-standing.handlers';
import { PrincipalRevocationRepository } from './principals/principal-revocation.repository';

export const LIFECYCLE_CONTEXT = Symbol('LIFECYCLE_CONTEXT');

/** Runs startup recovery in the background (a slow participant must not hold up serving) and waits for it on shutdown. */
@Injectable()
export class LifecycleRecovery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(LifecycleService) private readonly lifecycle: LifecycleService,
    @Inject(LIFECYCLE_CONTEXT) private readonly context: { service: ServiceContext; recoverOnStart: boolean },
  ) {}

  onApplicationBootstrap(): void {
    if (!this.context.recoverOnStart) return;
    this.running = this.run();
  }

  /** The latest recovery pass (tests await it after a restart). */
  get completion(): Promise<unknown> {
    return this.running;
  }

  run(): Promise<unknown> {
    const pass = this.lifecycle.recover().then(
      (result) => this.context.service.logger.info(result, 'lifecycle recovery pass done'),
      (err: unknown) => this.context.service.logger.error({ err }, 'lifecycle recovery pass failed'),
    );
    this.running = pass;
    return pass;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.running;
  }
}

/** The lifecycle-store's domain: repositories over the service's own schema, the service, its bus handlers, recovery. */
@Module({})
export class LifecycleModule {
  static register(context: ServiceContext<LifecycleConfig>, database: ServiceDatabase): DynamicModule {
    const config = context.config;
    return {
      module: LifecycleModule,
      providers: [
        { provide: LIFECYCLE_CONTEXT, useValue: { service: context, recoverOnStart: config.LIFECYCLE_RECOVER_ON_START } },
        { provide: FAULT_POINTS, useValue: new FaultPoints<LifecycleFaultPoint>() },
        { provide: LifecycleMetrics, useValue: new LifecycleMetrics(context.metrics.registry) },
        {
          provide: LifecycleService,
          inject: [BusClient, FAULT_POINTS, LifecycleMetrics],
          useFactory: (bus: BusClient, faults: FaultPoints<LifecycleFaultPoint>, metrics: LifecycleMetrics) =>
            new LifecycleService({
              repo: new LifecycleRepository(database),
              ledger: new EventLedgerRepository(database),
              bus,
              faults,
              metrics,
              logger: context.logger,
              config,
            }),
        },
        LifecycleHandlers,
        { provide: LIFECYCLE_DATABASE, useValue: database },
        FindCallEventHandlers,
        AppAuditHandlers,
        { provide: SealedReferencesRepository, useValue: new SealedReferencesRepository(database) },
        SealedReferencesHandlers,
        { provide: PrincipalRevocationRepository, useValue: new PrincipalRevocationRepository(database) },
        PrincipalRevocationHandlers,
        SessionStandingHandlers,
        { provide: MessageWaiter, useValue: new MessageWaiter(database) },
        {
          provide: MessagesService,
          inject: [MessageWaiter, LifecycleMetrics],
          useFactory: (waiter: MessageWaiter, metrics: LifecycleMetrics) =>
            new MessagesService({
              repo: new LifecycleRepository(database),
              messages: new MessageRepository(database, config.LIFECYCLE_MESSAGE_RETENTION_MS),
              waiter,
              metrics,
            }),
        },
        MessagesHandlers,
        LifecycleRecovery,
      ],
      exports: [LifecycleService, FAULT_POINTS, LifecycleRecovery],
    };
  }
}
