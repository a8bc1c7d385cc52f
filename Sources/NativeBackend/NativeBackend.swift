import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import NIOCore
import PXCore

/// The backend that speaks DICOM itself: px's upper layer (PS3.8) and DIMSE (PS3.7) on SwiftNIO.
///
/// Every operation opens one association with ``DICOMClient`` (TCP_NODELAY, connect/ACSE/DIMSE
/// timeouts from ``Connection/timeouts``), and the overall deadline cancels it. Results are PXCore's
/// typed results, so the JSON is the one the DCMTK backend produces.
public struct NativeBackend: DICOMBackend {
    public var name: String { "native" }

    public init() {}

    func client(_ connection: Connection, logger: Logger, window: UInt16 = 1) -> DICOMClient {
        let t = connection.timeouts
        var configuration = DICOMClient.Configuration(
            callingAETitle: connection.local.aeTitle,
            connectTimeout: .seconds(t.connect),
            acseTimeout: .seconds(t.acse),
            dimseTimeout: .seconds(t.dimse)
        )
        configuration.maximumOutstandingRequests = window
        configuration.tls = connection.tls?.network
        configuration.userIdentity = connection.userIdentity?.network
        return DICOMClient(configuration: configuration, logger: logger)
    }

    func peer(_ connection: Connection) -> DICOMPeer {
        DICOMPeer(host: connection.node.host, port: connection.node.port, aeTitle: connection.node.calledAETitle)
    }

    /// Runs `body` under the connection's overall deadline, mapping network errors to ``PXError``.
    func run<T: Sendable>(
        _ operation: String, _ connection: Connection, _ body: @escaping @Sendable () async throws -> T
    ) async throws(PXError) -> T {
        do {
            guard let deadline = connection.timeouts.deadline else { return try await body() }
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: .seconds(deadline))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let value = first else {
                    throw PXError.timeout("deadline", seconds: deadline, detail: "\(operation) cancelled")
                }
                return value
            }
        } catch let error as DICOMNetworkError {
            throw Self.pxError(error, operation: operation, connection: connection)
        } catch {
            throw PXError.from(error)
        }
    }

    /// A network error as the ``PXError`` the DCMTK backend reports for the same failure.
    static func pxError(_ error: DICOMNetworkError, operation: String, connection: Connection) -> PXError {
        let node = connection.node
        let t = connection.timeouts
        switch error.code {
        case .connectionRefused:
            return .connectionRefused(host: node.host, port: node.port)
        case .connectionFailed:
            return .connectionRefused(host: node.host, port: node.port, detail: error.detail)
        case .unknownHost:
            return .unknownHost(node.host)
        case .connectTimeout:
            return .timeout("connect", seconds: t.connect)
        case .acseTimeout:
            return .timeout("ACSE", seconds: t.acse)
        case .dimseTimeout, .idleTimeout:
            return .timeout("DIMSE", seconds: t.dimse)
        case .associationRejected:
            guard let rj = error.rejection else {
                return .associationRejected(result: "unknown", source: "unknown", reason: "unknown")
            }
            return .associationRejected(
                result: rj.result.description, source: rj.source.description, reason: rj.reasonDescription)
        case .noAcceptablePresentationContext:
            return .noAcceptablePresentationContext()
        case .invalidArgument:
            return .usage(error.detail)
        case .fileError:
            return .io(error.detail)
        case .operationFailed:
            return .dimseFailure(error.status ?? DIMSEStatus(code: 0xC000), operation: operation)
        case .tlsHandshakeTimeout:
            return .timeout("TLS handshake", seconds: t.connect, detail: error.detail)
        default:
            return Self.pxTLSError(error) ?? .aborted(error.detail)
        }
    }
}

extension UserIdentity {
    /// The A-ASSOCIATE-RQ's User Identity sub-item (0x58, PS3.7 §D.3.3.7.1).
    var network: UserIdentityRQ {
        UserIdentityRQ(
            identityType: UserIdentityRQ.IdentityType(rawValue: typeCode),
            positiveResponseRequested: positiveResponseRequested,
            primaryField: ByteBuffer(bytes: primaryField), secondaryField: ByteBuffer(bytes: secondaryField))
    }

    /// What the acceptor answered: its 0x59 sub-item, or none.
    func outcome(_ response: UserIdentityAC?) -> UserIdentityOutcome {
        guard positiveResponseRequested else { return UserIdentityOutcome(self, positiveResponseReceived: nil) }
        return UserIdentityOutcome(
            self, positiveResponseReceived: response != nil,
            serverResponse: response.map { Array($0.serverResponse.readableBytesView) } ?? [])
    }
}

extension QueryModel {
    var network: QueryRetrieveModel { self == .studyRoot ? .studyRoot : .patientRoot }
}

extension QueryLevel {
    var network: QueryRetrieveLevel {
        switch self {
        case .patient: return .patient
        case .study: return .study
        case .series: return .series
        case .image: return .image
        }
    }
}

extension TimeAmount {
    static func seconds(_ value: Double) -> TimeAmount {
        .nanoseconds(Int64((value * 1e9).rounded()))
    }
}
