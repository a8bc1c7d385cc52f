import DICOMData
import Logging
import PXCore
import PXPlaces
import PXStorage

extension PX {
    /// The logger operations use when given none: warnings and errors on stderr, so that stdout stays the
    /// program's own (px's commands print only JSON there).
    public static let logger: Logger = {
        var logger = Logger(label: "px") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return logger
    }()

    /// A result, an event or any other `Encodable` value as one line of JSON, with exactly the bytes the
    /// commands print (`JSONValueEncoder`: members in their order, no escaped `/`). A result's line is
    /// the `data` of its command's envelope; a sync or listen event's is the command's NDJSON line.
    public static func json(_ value: some Encodable, pretty: Bool = false) -> String {
        var bytes: [UInt8] = []
        JSONValueEncoder.encode(value).write(into: &bytes, pretty: pretty, indent: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Makes sure the destination holds the selected studies of the sources, transferring only what it lacks
    /// (px-sync): one run of `SyncEngine`, its events as a stream.
    ///
    /// ```swift
    /// for try await event in PX.sync(from: pacs, to: try PX.place("zip:/data/zips"), where: ["PatientID": "P1"]) {
    ///     print(PX.json(event))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sources: where the studies are (``PX/place(_:config:backend:logger:)``).
    ///   - destination: where they go (``PX/destination(_:config:backend:logger:)``).
    ///   - keys: the studies to sync, as matching keys by keyword (`"StudyDate": "20240101-"`); none: every study.
    ///   - options: force, dry run, verify, studies at once.
    /// - Returns: the events in order (each encodes to px-sync's NDJSON line, `SyncEvent.isNDJSONLine`),
    ///   the last `SyncEvent.finished(_:)` with the summary (px-sync's `data`). Studies that failed are
    ///   in it; the stream throws `PXError` only for what stopped the run. Stopping the loop cancels it.
    public static func sync(
        from sources: Endpoint..., to destination: Endpoint, where keys: [String: String] = [:],
        options: SyncEngine.Options = SyncEngine.Options(), logger: Logger = PX.logger
    ) -> AsyncThrowingStream<SyncEvent, any Error> {
        let identifier: DataSet
        do {
            identifier = try QueryKey.identifier(returning: [], matching: try QueryKey.matching(keys))
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        return SyncEngine.events(
            sources: sources, destinations: [destination], options: options, logger: logger,
            selection: .keys(identifier))
    }

    /// A storage SCP (C-STORE, PS3.4 Annex B) on `port`: what it receives is filed under `root` in px's tree
    /// (`StorageLayout`, as px-listen files it), each step an event. It listens until the loop stops
    /// (a `break`) or the task is cancelled.
    ///
    /// ```swift
    /// for try await event in PX.listen(port: 11112, aeTitle: "PXSCP", into: "/data/incoming") {
    ///     print(PX.json(event))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - port: the TCP port to listen on.
    ///   - aeTitle: the AE title it answers as (any called AE title is accepted, as px-listen does).
    ///   - root: the folder instances are filed under (made when missing).
    ///   - logger: the receiver's.
    ///   - configure: changes to px-listen's defaults (duplicates, limits, TLS, accepted calling AE titles...).
    /// - Returns: the events (each encodes to px-listen's NDJSON line), first `ListenEvent.listening(port:aeTitle:)`
    ///   once the port is open; the stream throws `PXError` when the receiver cannot start or dies.
    public static func listen(
        port: Int, aeTitle: String = "PXLISTEN", into root: String, logger: Logger = PX.logger,
        configure: (inout ListenConfiguration) -> Void = { _ in }
    ) -> AsyncThrowingStream<ListenEvent, any Error> {
        let configuration: ListenConfiguration
        do {
            // px-listen's defaults: any called AE title answered, its server timeouts.
            var made = try ListenConfiguration(
                port: port, aeTitle: aeTitle, root: root,
                timeouts: Timeouts(connect: 10, acse: 30, dimse: 60, deadline: nil),
                acceptsAnyCalledAETitle: true)
            configure(&made)
            configuration = made
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await PX.backend(.native, for: .listen).listen(configuration, logger: logger) { event in
                        continuation.yield(event)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
