import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

extension NativeBackend {
    /// C-GET SCU (PS3.4 C.4.3) on one association: the storage SOP classes are proposed with the SCP
    /// role (role selection, PS3.7 §D.3.3.4), and each C-STORE sub-operation is streamed to a temporary
    /// file under the root and renamed into the ``StorageLayout`` tree *before* its C-STORE-RSP is sent,
    /// as px-listen does. A session of one request (``NativeSession``).
    public func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try await withRetrieveSession(connection: connection, logger: logger) { session throws(PXError) in
            try await session.get(request, onProgress: onProgress)
        }
    }
}
