import DICOMProtocol
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AssociationConnection {
    /// How much of a file one `pread(2)` takes: whole PDV fragments, about 1 MiB.
    static let streamingReadSize = 1 << 20

    /// Sends one DIMSE message whose data set is `length` bytes of an open file starting at `offset`
    /// (PS3.7 §9.3.1, PS3.8 §9.3.5, Annex E).
    ///
    /// The data set is never held whole in memory: each `pread(2)` fills a fresh ByteBuffer with about
    /// 1 MiB, which is sliced (zero-copy) into PDV fragments of the peer's maximum length, one PDV per
    /// P-DATA-TF. The PDUs go straight to the channel (not through the async writer, whose writability
    /// lags behind the event loop) and at most two chunks are in flight: before a chunk is written the
    /// one before the previous must have reached the socket, each wait bounded by `timeout` (the DIMSE
    /// timeout; a peer that stops reading gets its connection closed). Every earlier write on the
    /// association has been processed already (a response to it arrived), so ordering holds.
    func send(
        _ message: DIMSEMessage, presentationContextID: UInt8, dataSetOf descriptor: Int32, offset: Int, length: Int,
        path: String, timeout: TimeAmount?
    ) async throws {
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        let channel = self.channel
        let waitingFor = "the peer reading the C-STORE data set"
        let command = message.commandSet.encoded(allocator: channel.allocator)
        let commandFragments = try PDataFragmenter(
            presentationContextID: presentationContextID, command: command, dataset: nil,
            peerMaximumPDULength: negotiated.peerMaximumPDULength)
        let fragmentLength = commandFragments.fragmentLength
        for data in commandFragments {
            channel.write(try self.admit(data, sending: "\(message.commandField)"), promise: nil)
        }
        if length == 0 {
            let empty = DataTF(PDV(presentationContextID: presentationContextID, messageControlHeader: .dataLast, data: ByteBuffer()))
            let done = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(try self.admit(empty, sending: "a data set"), promise: done)
            try await self.wait(for: done.futureResult, timeout: timeout, waitingFor: waitingFor)
            return
        }
        let chunk = max(fragmentLength, Self.streamingReadSize / fragmentLength * fragmentLength)
        var position = offset
        var remaining = length
        var inFlight: [EventLoopFuture<Void>] = []
        while remaining > 0 {
            let want = min(chunk, remaining)
            var buffer = channel.allocator.buffer(capacity: want)
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                var done = 0
                while done < want {
                    let n = pread(descriptor, raw.baseAddress! + done, want - done, off_t(position + done))
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { throw DICOMNetworkError.fileError("cannot read \(path): errno \(errno)") }
                    if n == 0 { throw DICOMNetworkError.fileError("\(path) ended early (it changed while being sent)") }
                    done += n
                }
                return done
            }
            position += want
            remaining -= want
            if inFlight.count >= 2 {
                try await self.wait(for: inFlight.removeFirst(), timeout: timeout, waitingFor: waitingFor)
            }
            var last: EventLoopFuture<Void>?
            while buffer.readableBytes > 0 {
                let fragment = buffer.readSlice(length: min(fragmentLength, buffer.readableBytes))!
                let isLast = buffer.readableBytes == 0
                let header = PDV.MessageControlHeader(isCommand: false, isLastFragment: remaining == 0 && isLast)
                let pdu = try self.admit(
                    DataTF(PDV(presentationContextID: presentationContextID, messageControlHeader: header, data: fragment)),
                    sending: "a data set")
                if isLast {
                    let promise = channel.eventLoop.makePromise(of: Void.self)
                    channel.writeAndFlush(pdu, promise: promise)
                    last = promise.futureResult
                } else {
                    channel.write(pdu, promise: nil)
                }
            }
            if let last { inFlight.append(last) }
        }
        for future in inFlight {
            try await self.wait(for: future, timeout: timeout, waitingFor: waitingFor)
        }
    }

    /// Waits for a write to reach the socket, at most `timeout`; on expiry the connection is closed
    /// (which fails the write) and a DIMSE timeout is thrown. A write that fails otherwise (the peer
    /// aborted or closed) is a closed connection.
    private func wait(for write: EventLoopFuture<Void>, timeout: TimeAmount?, waitingFor: String) async throws {
        let channel = self.channel
        let expired = WriteTimeoutFlag()
        let timer = timeout.map { timeout in
            channel.eventLoop.scheduleTask(in: timeout) {
                expired.value.store(true, ordering: .relaxed)
                channel.close(promise: nil)
            }
        }
        do {
            try await write.get()
            timer?.cancel()
        } catch {
            timer?.cancel()
            if expired.value.load(ordering: .relaxed) { throw DICOMNetworkError.dimseTimeout(waitingFor) }
            throw DICOMNetworkError.connectionClosed("the connection failed while sending a data set: \(error)")
        }
    }
}

/// Set when a data-set write outlived the DIMSE timeout.
final class WriteTimeoutFlag: Sendable {
    let value = Atomic<Bool>(false)
}
